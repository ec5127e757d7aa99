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

export type PlanCheck =
  | { plan: GpuplanPlan; problems: []; source: SourceFile }
  | { plan: undefined; problems: Problem[]; source: SourceFile };

/** Read and check the plan file `file` (as the user named it, for messages). */
export async function readPlanFile(file: string, path = file): Promise<PlanCheck> {
  return checkPlan(await parsePlanText(file, await readSourceText(path, "plan")));
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

/** The parsed data as a plan, or the problems (syntax, then schema) that make it none. */
export async function checkPlan(parsed: ParsedSource): Promise<PlanCheck> {
  const { source, data } = parsed;
  if (hasErrors(parsed.problems)) return { plan: undefined, problems: parsed.problems, source };
  const { default: validatePlan } = await import("../generated/plan-validator.js");
  const upgraded = withRenamedSettings(data);
  if (validatePlan(upgraded)) return { plan: upgraded as GpuplanPlan, problems: [], source };
  const { schemaProblems } = await import("../problems/schema-errors.js");
  return {
    plan: undefined,
    problems: [
      error({
        code: "invalid-plan",
        message: `${source.file} is not a gpuplan plan (schema gpuplan/plan@1)`,
        hint: "make one with gpuplan compile PIPELINE.yaml -o plan.json",
        file: source.file,
      }),
      ...schemaProblems(validatePlan.errors ?? [], source.file),
    ],
    source,
  };
}

/**
 * `settings.workers` was renamed `settings.maxParallelPipelines` ("worker" is the warm model
 * process); a plan written before is read with the new name, so a committed plan or a run kept
 * for `--resume` goes on working.
 */
function withRenamedSettings(data: unknown): unknown {
  const isRecord = (v: unknown): v is Record<string, unknown> =>
    typeof v === "object" && v !== null && !Array.isArray(v);
  if (!isRecord(data) || !isRecord(data.settings)) return data;
  const { workers, ...settings } = data.settings;
  if (workers === undefined || "maxParallelPipelines" in settings) return data;
  return { ...data, settings: { ...settings, maxParallelPipelines: workers } };
}
