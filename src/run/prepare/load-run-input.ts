/**
 * What `gpuplan run` was given: a plan (JSON from compile, read and schema-checked by
 * src/plan/read-plan.ts) or a pipeline file (compiled in memory against live detection). Either
 * way the result is a plan, the directory step `cwd`s are relative to, and every problem found
 * on the way.
 */
import { dirname, relative, resolve } from "node:path";
import type { DetectInventory, Inventory } from "../../inventory/types.js";
import { resolvePlanPath } from "../../plan/plan-paths.js";
import { PlanTooLarge, planSizeLimit } from "../../plan/plan-size.js";
import { isPlanSchema, PLAN_SCHEMA } from "../../plan/plan-text.js";
import { checkPlan, parsePlanText } from "../../plan/read-plan.js";
import type { Problem } from "../../problems/problem.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";
import { readSourceText, type SourceFile } from "../../source/read-source-text.js";
import { shellWord } from "../../text/shell-word.js";

export interface RunInput {
  kind: "plan" | "pipeline";
  plan: GpuplanPlan | undefined;
  /** Absolute directory of the pipeline file: step cwds are relative to it. */
  baseDir: string;
  /** The live inventory when compiling needed it (so verification does not detect twice). */
  inventory?: Inventory;
  problems: Problem[];
  sources: SourceFile[];
  /** The command that makes a fresh plan for this input, for hints. */
  recompile: string;
  /** The command that makes a plan for this very machine (live detection), when the GPUs do not match. */
  recompileHere?: string;
  /**
   * The plan file's text when it is in the format this gpuplan writes: a new run keeps it as its
   * copy of the plan instead of writing the plan anew (compile wrote these bytes; a plan that
   * binding changes is written anew).
   */
  text?: string;
}

export async function loadRunInput(
  file: string,
  detect: DetectInventory,
  { verify = true, cwd = process.cwd() }: { verify?: boolean; cwd?: string } = {},
): Promise<RunInput> {
  let text: string;
  try {
    // Refused by its size before it is read: a plan too big for the heap would end Node with a fatal error.
    text = await readSourceText(file, "plan", planSizeLimit(file));
  } catch (e) {
    if (!(e instanceof PlanTooLarge && e.problem)) throw e;
    const source = { file, text: "" };
    return {
      kind: "plan",
      plan: undefined,
      baseDir: cwd,
      problems: [e.problem],
      sources: [source],
      recompile: "",
    };
  }
  const parsed = await parsePlanText(file, text);
  const data = parsed.data;
  const isPlan =
    file.endsWith(".json") ||
    (typeof data === "object" && data !== null && isPlanSchema((data as { schema?: unknown }).schema));
  // A plan with GPUs is checked against the live machine after it is read: the detection's probe
  // child (a Node start and the vendor libraries) starts now, while the plan is checked, and
  // prepare-run.ts collects its answer (detect is asked once). Its failure is reported there.
  if (isPlan && verify && hasGpus(data)) detect().catch(() => undefined);
  if (!isPlan) {
    // A pipeline file: the compiler (and the YAML parser) is loaded only for this case.
    const [{ checkPipelineText }, { compilePlan }] = await Promise.all([
      import("../../pipeline/load-pipeline.js"),
      import("../../compile/compile.js"),
    ]);
    const loaded = checkPipelineText(file, text);
    const inventory = await detect();
    const result = compilePlan(loaded, { inventory, label: "detect", problems: [] });
    return {
      kind: "pipeline",
      plan: result.plan,
      baseDir: resolve(cwd, dirname(file)),
      inventory,
      problems: result.problems,
      sources: result.sources,
      recompile: `gpuplan run ${shellWord(file)} compiles it again`,
    };
  }
  const checked = await checkPlan(parsed);
  const base = { kind: "plan" as const, sources: [checked.source] };
  if (!checked.plan) {
    // Located (file:line:column) like compile's problems: the reason a plan is refused is in it.
    const { locateProblems } = await import("../../source/locate.js");
    const problems = locateProblems(checked.problems, [checked.source]);
    return { ...base, plan: undefined, baseDir: cwd, problems, recompile: "" };
  }
  const { plan } = checked;
  const pipeline = resolvePlanPath(plan.source.file, file, cwd);
  // A YAML plan's parser warnings (`%YAML 1.1`), located as compile's are.
  const warnings =
    checked.problems.length === 0
      ? []
      : (await import("../../source/locate.js")).locateProblems(checked.problems, [checked.source]);
  return {
    ...base,
    plan,
    baseDir: dirname(pipeline),
    problems: warnings,
    ...((data as { schema?: unknown }).schema === PLAN_SCHEMA && { text }),
    recompile: `gpuplan compile ${shellWord(relative(cwd, pipeline) || pipeline)}${inventoryFlag(plan, file, cwd)} -o ${shellWord(file)}`,
    // Not `compile … -o ${file}`: that would put this machine's plan under the name of a plan
    // made (and perhaps reviewed) for another kind of machine (plans/l4-x4.json).
    recompileHere: `gpuplan run ${shellWord(relative(cwd, pipeline) || pipeline)}`,
  };
}

/**
 * The flag that made the plan's inventory (`detect`: none, compile detects again). Its value and
 * the paths beside it come from the plan's text (a hand edit can put anything there): each is one
 * shell word, so a pasted hint never runs what a plan says.
 */
function inventoryFlag(plan: GpuplanPlan, planFile: string, cwd: string): string {
  const label = plan.inventory.label;
  if (label.startsWith("target:")) return ` --target ${shellWord(label.slice("target:".length))}`;
  if (!label.startsWith("file:")) return "";
  const inventory = resolvePlanPath(label.slice("file:".length), planFile, cwd);
  return ` --inventory ${shellWord(relative(cwd, inventory) || inventory)}`;
}

/** Whether plan data (not yet checked) names any GPU: a registry with entries. */
function hasGpus(data: unknown): boolean {
  const registry = (data as { registry?: unknown } | null)?.registry;
  return Array.isArray(registry) && registry.length > 0;
}
