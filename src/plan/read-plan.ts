/**
 * Reading a plan file: JSON.parse first (a plan is JSON, and the YAML parser is ~10× slower on a
 * big one), the YAML parser only to locate a syntax error, then the check against
 * schemas/plan.schema.json (precompiled validator, loaded only here). What fails comes back as
 * located problems, never as a plan that is not one.
 */
import { error, hasErrors, type Problem } from "../problems/problem.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import { readSourceText, type SourceFile } from "../source/read-source-text.js";
import type { ParsedSource } from "../source/source-file.js";
import { VERSION } from "../version.js";

/** The newest plan format this gpuplan reads (`schema: gpuplan/plan@2`; it writes that one too). */
const PLAN_FORMAT = 2;

import { shellWord } from "../text/shell-word.js";
import { fillDefaults } from "./plan-defaults.js";
import { PlanTooLarge, planSizeLimit } from "./plan-size.js";
import { isPlanSchema } from "./plan-text.js";
import { upgradePlan } from "./upgrade-plan.js";

export type PlanCheck =
  /** A plan; its problems are the parser's warnings (a YAML plan's `%YAML 1.1` directive). */
  | { plan: GpuplanPlan; problems: Problem[]; source: SourceFile }
  | { plan: undefined; problems: Problem[]; source: SourceFile };

/** Read and check the plan file `file` (as the user named it, for messages). */
export async function readPlanFile(file: string, path = file): Promise<PlanCheck> {
  let text: string;
  try {
    // Refused by its size before it is read: a plan too big for the heap would end Node with a fatal error.
    text = await readSourceText(path, "plan", planSizeLimit(file));
  } catch (e) {
    if (!(e instanceof PlanTooLarge && e.problem)) throw e;
    return { plan: undefined, problems: [e.problem], source: { file, text: "" } };
  }
  return checkPlan(await parsePlanText(file, text));
}

/** Parse a plan's text: JSON when it is JSON, else YAML (which also says where a JSON syntax error is). */
export async function parsePlanText(file: string, text: string): Promise<ParsedSource> {
  if (file.endsWith(".json")) {
    try {
      return { source: { file, text }, data: JSON.parse(text) as unknown, problems: [] };
    } catch {
      // Fall through: the YAML parser says where the syntax error is.
    }
  }
  return (await import("../source/source-file.js")).parseSource(file, text);
}

/**
 * The parsed data as a plan, or the problems (syntax, then schema) that make it none. The parser's
 * warnings (a YAML plan's `%YAML 1.1` directive) come with either, as they do for a pipeline file.
 */
export async function checkPlan(parsed: ParsedSource): Promise<PlanCheck> {
  if (hasErrors(parsed.problems)) {
    const cut = truncation(parsed.source);
    return { plan: undefined, problems: cut ? [cut] : parsed.problems, source: parsed.source };
  }
  const checked = await checkPlanData(parsed.source, parsed.data);
  return parsed.problems.length === 0
    ? checked
    : { ...checked, problems: [...parsed.problems, ...checked.problems] };
}

async function checkPlanData(source: SourceFile, data: unknown): Promise<PlanCheck> {
  const newer = newerFormat(data, source.file);
  if (newer) return { plan: undefined, problems: [newer], source };
  const { default: validatePlan } = await import("../generated/plan-validator.js");
  const upgraded = upgradePlan(data);
  if (validatePlan(upgraded)) {
    const plan = fillDefaults(upgraded as GpuplanPlan);
    const { planInvariantProblems } = await import("./plan-invariants.js");
    const broken = planInvariantProblems(plan, source.file);
    return broken.length ? { plan: undefined, problems: broken, source } : { plan, problems: [], source };
  }
  const pipeline = pipelineFile(data, source.file);
  if (pipeline) return { plan: undefined, problems: [pipeline], source };
  const { schemaProblems } = await import("../problems/schema-errors.js");
  const writer = writtenBy(data);
  return {
    plan: undefined,
    problems: [
      error({
        code: "invalid-plan",
        message:
          `${source.file} is not a gpuplan plan (schema gpuplan/plan@${PLAN_FORMAT})` +
          (writer && writer !== VERSION ? `; it says gpuplan ${writer} wrote it, this is ${VERSION}` : ""),
        hint:
          writer && writer !== VERSION
            ? `run it with gpuplan ${writer}, or compile it again with this one: gpuplan compile PIPELINE.yaml -o ${shellWord(source.file)}`
            : "make one with gpuplan compile PIPELINE.yaml -o plan.json",
        file: source.file,
      }),
      ...schemaProblems(validatePlan.errors ?? [], source.file),
    ],
    source,
  };
}

const isRecord = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);

const writtenBy = (data: unknown): string | undefined =>
  isRecord(data) && typeof data.gpuplanVersion === "string" ? data.gpuplanVersion : undefined;

/**
 * A pipeline file where a plan was expected (`gpuplan report pipeline.yaml`): one problem that says
 * so, not the thirty schema errors of a document that was never meant to be a plan.
 */
function pipelineFile(data: unknown, file: string): Problem | undefined {
  if (!isRecord(data) || "schema" in data || !("version" in data) || !Array.isArray(data.pipelines))
    return undefined;
  return error({
    code: "invalid-plan",
    message: `${file} is a pipeline file, not a plan`,
    hint: `compile it into a plan first: gpuplan compile ${file} -o plan.json`,
    file,
  });
}

/** A plan in a format this gpuplan does not know yet (gpuplan/plan@2 and later). */
function newerFormat(data: unknown, file: string): Problem | undefined {
  if (!isRecord(data) || !isPlanSchema(data.schema)) return undefined;
  const m = /^gpuplan\/plan@(\d+)$/.exec(String(data.schema));
  if (!m || Number(m[1]) <= PLAN_FORMAT) return undefined;
  const writer = writtenBy(data);
  return error({
    code: "plan-too-new",
    message: `${file} is in plan format ${data.schema}${writer ? `, written by gpuplan ${writer}` : ""}; this gpuplan (${VERSION}) reads gpuplan/plan@${PLAN_FORMAT} and earlier`,
    hint: `run it with ${writer ? `gpuplan ${writer}` : "a newer gpuplan"}, or compile it again with this one`,
    file,
    pointer: "/schema",
  });
}

/** A JSON plan that stops before its closing brace: cut short by a copy or a write that did not finish. */
function truncation(source: SourceFile): Problem | undefined {
  const text = source.text.trimEnd();
  if (!text.startsWith("{") || text.endsWith("}")) return undefined;
  return error({
    code: "plan-truncated",
    message: `${source.file} ends before the plan does (${source.text.length} bytes, no closing \`}\`): it was cut short`,
    hint: "copy the plan again, or write it again with gpuplan compile PIPELINE.yaml -o PLAN",
    file: source.file,
    offset: source.text.length,
  });
}
