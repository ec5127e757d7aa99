/** Run pipeline text through the real loader and locate its problems, as the CLI would print them. */
import { checkPipelineText, type LoadedPipelineFile } from "../../src/pipeline/load-pipeline.js";
import type { ResolvedPipeline, ResolvedStep } from "../../src/pipeline/model.js";
import type { Problem } from "../../src/problems/problem.js";
import { locateProblems } from "../../src/source/locate.js";

const FILE = "pipeline.yaml";

/** Strip the common indentation of a template literal, so YAML can be written inline. */
export function yaml(strings: TemplateStringsArray, ...values: unknown[]): string {
  const text = String.raw({ raw: strings }, ...values).replace(/^\n/, "");
  const indents = text
    .split("\n")
    .filter((l) => l.trim() !== "")
    .map((l) => /^ */.exec(l)![0].length);
  const cut = Math.min(...indents);
  return text
    .split("\n")
    .map((l) => l.slice(cut))
    .join("\n");
}

export function check(text: string): LoadedPipelineFile {
  const loaded = checkPipelineText(FILE, text);
  return { ...loaded, problems: locateProblems(loaded.problems, [loaded.source]) };
}

export const withCode = (problems: readonly Problem[], code: string): Problem[] =>
  problems.filter((p) => p.code === code);

/** The only problem with this code; fails the test when there are none or several. */
export function one(problems: readonly Problem[], code: string): Problem {
  const found = withCode(problems, code);
  if (found.length !== 1) {
    throw new Error(
      `expected one \`${code}\`, got ${found.length}: ${JSON.stringify(problems.map((p) => [p.code, p.pointer]))}`,
    );
  }
  return found[0]!;
}

export function pipelines(loaded: LoadedPipelineFile): ResolvedPipeline[] {
  if (!loaded.resolved) throw new Error(`not resolved: ${JSON.stringify(loaded.problems)}`);
  return loaded.resolved.pipelines;
}

export function step(loaded: LoadedPipelineFile, id: string, pipeline = 0): ResolvedStep {
  const s = pipelines(loaded)[pipeline]?.steps.find((x) => x.id === id);
  if (!s) throw new Error(`no step ${id}`);
  return s;
}
