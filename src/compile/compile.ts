/**
 * compile = loaded pipeline file + inventory → registry → assignment → device maps → plan.
 * Returns the plan (only when there are no errors) and every problem, located and sorted.
 */

import { dirname } from "node:path";
import { overBudgetWarnings, type Placement } from "../history/budget-warnings.js";
import { type LearnedPipelines, learnEstimates } from "../history/learn-estimates.js";
import type { History } from "../history/read-history.js";
import { inventoryFingerprint } from "../inventory/fingerprint.js";
import type { InventoryChoice } from "../inventory/load-inventory.js";
import { append } from "../lists/append.js";
import type { LoadedPipelineFile } from "../pipeline/load-pipeline.js";
import type { ResolvedPipeline } from "../pipeline/model.js";
import { pathInPlan } from "../plan/plan-paths.js";
import { planText } from "../plan/plan-text.js";
import { dedupeProblems } from "../problems/dedupe.js";
import { hasErrors, type Problem, sortProblems } from "../problems/problem.js";
import { toReportedProblem } from "../problems/reported-problem.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import { locateProblems } from "../source/locate.js";
import type { SourceFile } from "../source/source-file.js";
import { assignGpus, type Schedule } from "./assign.js";
import { buildPlan } from "./build-plan.js";
import { buildRegistry } from "./registry.js";

export interface CompileResult {
  plan: GpuplanPlan | undefined;
  /** The exact bytes compile writes for the plan (made when first read; plan-text.ts streams them). */
  readonly planText: string | undefined;
  problems: Problem[];
  sources: SourceFile[];
  /** With --history: the steps (one per template and id) given learned values, plan or not. */
  learnedSteps?: number;
}

export interface CompileOptions {
  /** The folder the plan will live in: its paths are relative to it. Default: the pipeline's folder. */
  planDir?: string;
  /** The pipeline came on standard input: it has a name, not a path. */
  fromStdin?: boolean;
  /** What earlier runs measured (compile --history), read by src/history/read-history.ts. */
  history?: History;
}

export function compilePlan(
  loaded: LoadedPipelineFile,
  choice: InventoryChoice,
  options: CompileOptions = {},
): CompileResult {
  const file = loaded.source.file;
  const planDir = options.planDir ?? dirname(file);
  // Standard input has no path: its name is recorded as is.
  const recorded = options.fromStdin ? file : pathInPlan(file, planDir);
  const sources = [loaded.source, ...(choice.source ? [choice.source] : [])];
  const problems: Problem[] = [...loaded.problems, ...choice.problems, ...(options.history?.problems ?? [])];
  let learnedSteps: number | undefined;
  const finish = (plan?: GpuplanPlan): CompileResult => {
    const located = sortProblems(locateProblems(dedupeProblems(problems), sources));
    const learnedCount = learnedSteps === undefined ? {} : { learnedSteps };
    if (!plan || hasErrors(located))
      return { plan: undefined, planText: undefined, problems: located, sources, ...learnedCount };
    // Located at their files as the plan records them: as typed, `./x.yaml` and `x.yaml` wrote
    // other bytes and `--check` blamed a hand edit. Standard input keeps its name.
    const inPlan = new Map<string, string>();
    const fileInPlan = (f: string): string => {
      if (options.fromStdin && f === file) return f;
      const known = inPlan.get(f);
      if (known !== undefined) return known;
      const recorded = pathInPlan(f, planDir);
      inPlan.set(f, recorded);
      return recorded;
    };
    plan.diagnostics = located.map((p) =>
      toReportedProblem(p.file === undefined ? p : { ...p, file: fileInPlan(p.file) }),
    );
    let text: string | undefined;
    return {
      plan,
      get planText() {
        text ??= planText(plan);
        return text;
      },
      problems: located,
      sources,
      ...learnedCount,
    };
  };
  const { resolved } = loaded;
  const inventory = choice.inventory;
  if (!resolved || !inventory) return finish();

  // With --history, what earlier runs measured replaces the typed estimates before anything is placed.
  const { history } = options;
  const learned = history ? learnFromHistory(resolved.pipelines, history, file, problems) : undefined;
  learnedSteps = learned?.learnedSteps;
  const pipelines = learned?.pipelines ?? resolved.pipelines;
  const registry = buildRegistry(inventory, resolved.registry, pipelines);
  append(problems, registry.problems);
  const schedule = assignGpus(pipelines, registry.value, resolved.registry, file, inventory.cpu.usableCores);
  append(problems, schedule.problems);
  if (learned?.overBudget.length) {
    const typed = buildRegistry(inventory, resolved.registry, resolved.pipelines).value;
    const typedSchedule = assignGpus(
      resolved.pipelines,
      typed,
      resolved.registry,
      file,
      inventory.cpu.usableCores,
    ).value;
    append(
      problems,
      overBudgetWarnings(
        learned.overBudget,
        placementOf(typedSchedule),
        placementOf(schedule.value),
        new Map(pipelines.map((p) => [p.name, p.template])),
        file,
      ),
    );
  }
  const plan = buildPlan({
    file,
    recordedFile: recorded,
    sha256: loaded.sha256,
    resolved: { ...resolved, pipelines },
    inventoryLabel: choice.file ? `file:${pathInPlan(choice.file, planDir)}` : choice.label,
    fingerprint: inventoryFingerprint(inventory),
    inventoryGpus: inventory.gpus.length,
    cpuMemoryBytes: inventory.cpu.memoryBytes,
    usableCores: inventory.cpu.usableCores,
    registry: registry.value,
    schedule: schedule.value,
  });
  append(problems, plan.problems);
  return finish(plan.value);
}

function learnFromHistory(
  pipelines: readonly ResolvedPipeline[],
  history: History,
  file: string,
  problems: Problem[],
): LearnedPipelines {
  const learned = learnEstimates(pipelines, history, file);
  append(problems, learned.problems);
  return learned;
}

function placementOf(schedule: Schedule): Placement {
  return {
    makespanMs: schedule.makespanMs,
    gpusOf: new Map(schedule.assignments.map((a) => [a.pipeline.name, a.gpus.map((e) => e.gpu.id)])),
    unplaced: new Set(schedule.assignments.filter((a) => a.unplaced).map((a) => a.pipeline.name)),
  };
}
