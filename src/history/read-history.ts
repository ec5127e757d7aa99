/**
 * What earlier runs measured, for `compile --history`: the run folders named (ids or paths) or, with
 * `auto`, the newest runs of this pipeline file in the runs folder, read through the report's
 * reader (src/report/run-folder.ts) and boiled down to samples per (pipeline template, step id).
 * Runs are taken in id order and samples only ever feed order-free statistics, so the same runs give
 * the same plan. An exported array's `slurm-JOB` and other Slurm runs are read as `report` reads
 * them: their tasks' events from slurm/events/ (run-folder.ts). A folder that cannot be read is a problem located at its file; a run of another
 * pipeline file is left out with a note.
 */
import { realpath } from "node:fs/promises";
import { basename, join, resolve } from "node:path";
import { error, type Problem, warning } from "../problems/problem.js";
import { foldRunEvents } from "../report/attempts.js";
import {
  findRunDir,
  type RunFolder,
  type RunHead,
  readRunEvents,
  readRunHead,
} from "../report/run-folder.js";
import { RUNS_DIR } from "../run/record/journal.js";
import { runIdsNewestFirst } from "../runs/run-order.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import { quickOwner } from "./quick-owner.js";
import { stepKey } from "./step-key.js";

/** How many of the newest runs of the pipeline file `--history auto` learns from. */
const AUTO_RUNS = 5;

/** What the runs measured of one step (all of its expansions: one template, one step id). */
export interface StepSamples {
  /** durationMs of each ok attempt. */
  durationsMs: number[];
  durationRuns: Set<string>;
  /** peakVramBytes of each attempt that has one (more than 0). */
  peaksBytes: number[];
  peakRuns: Set<string>;
  /** The smallest per-step memory budget the runs' plans gave it (null: none, a CPU step). */
  budgetBytes: number | null;
}

export interface History {
  /** The ids of the runs learned from, sorted. */
  runs: string[];
  /** By stepKey(template, step). */
  steps: Map<string, StepSamples>;
  /** What a person should hear about the choice of runs (printed on stderr). */
  notes: string[];
  problems: Problem[];
}

/**
 * Read the runs `refs` names (`["auto"]`: the newest AUTO_RUNS runs of `pipelineFile`), keeping
 * those of `pipelineFile` (or, for a file read from stdin, of a pipeline named `pipelineName`).
 */
export async function readHistory(
  refs: readonly string[],
  pipelineFile: string,
  pipelineName: string,
  runsDir = RUNS_DIR,
): Promise<History> {
  const history: History = { runs: [], steps: new Map(), notes: [], problems: [] };
  const auto = refs.length === 1 && refs[0] === "auto";
  const dirs = auto
    ? // Local and Slurm runs alike (an exported array's slurm-JOB too: its tasks' events are read
      // from slurm/events/), in the order gpuplan runs lists them.
      (await runIdsNewestFirst(runsDir)).map((id) => resolve(runsDir, id))
    : await Promise.all(refs.map((r) => findRunDir(r, runsDir)));
  const own: RunFolder[] = [];
  const seen = new Set<string>();
  const pipelineReal = pipelineFile === "-" ? "" : await realPath(pipelineFile);
  let others = 0;
  // Many runs share a pipeline file: its real path once each.
  const realPaths = new Map<string, Promise<string>>();
  const realOf = (file: string) => realPaths.get(file) ?? realPaths.set(file, realPath(file)).get(file)!;
  for (const dir of dirs) {
    if (auto && own.length >= AUTO_RUNS) break;
    const id = basename(dir);
    if (seen.has(id)) continue;
    // A run its first bytes say is another file's is passed over without reading it whole.
    const quick = auto ? quickOwner(dir) : null;
    if (
      quick &&
      (pipelineFile === "-"
        ? quick.name !== pipelineName
        : (await realOf(quick.pipelineFile)) !== pipelineReal)
    ) {
      seen.add(id);
      others++;
      continue;
    }
    // Whose run it is first, from its header and plan: another file's events are never parsed.
    const folder = await readRunHead(dir);
    seen.add(id);
    if (!folder.plan) {
      // Without its plan a run's pipelines cannot be told apart from another file's.
      if (auto) history.notes.push(`left out run ${id}: ${planNote(folder)}`);
      else history.problems.push(unreadable(dir, await readRunEvents(folder)));
      continue;
    }
    const ranFile = pipelineOf(folder);
    const mine =
      pipelineFile === "-"
        ? folder.plan.name === pipelineName
        : ranFile !== null && (await realOf(ranFile)) === pipelineReal;
    if (!mine) {
      others++;
      if (!auto)
        history.notes.push(
          `left out run ${id}: it ran ${ranFile ?? folder.plan.source.file}, not ${pipelineFile}`,
        );
      continue;
    }
    const whole = await readRunEvents(folder);
    damageProblems(dir, whole, history.problems);
    own.push(whole);
  }
  if (auto && others > 0)
    history.notes.push(`left out ${others} run(s) of other pipeline files in ${runsDir}`);
  for (const folder of own.sort((a, b) => cmp(basename(a.runDir), basename(b.runDir))))
    addSamples(folder, history);
  history.runs = own.map((f) => basename(f.runDir));
  return history;
}

/** The memory of the largest GPU each pipeline of the plan has (0: none known). */
function largestGpuOf(plan: GpuplanPlan): (pipeline: string) => number {
  const memory = new Map(plan.registry.map((r) => [r.gpu, r.memoryBytes]));
  const byPipeline = new Map(
    plan.pipelines.map((p) => [p.name, Math.max(0, ...p.gpus.map((g) => memory.get(g) ?? 0))]),
  );
  return (pipeline) => byPipeline.get(pipeline) ?? 0;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The absolute pipeline file a run was compiled from: the journal's baseDir holds it, the plan names it. */
function pipelineOf(folder: RunHead): string | null {
  const file = folder.plan?.source.file;
  if (!file) return null;
  if (folder.header) return resolve(folder.header.baseDir, basename(file));
  return resolve(file);
}

/**
 * A pipeline file by its real path: a run started as `/link/x.yaml` (its journal keeps the folder
 * as typed) is a run of `x.yaml` compiled from the real folder, and was left out as another file's.
 * Resolved as typed when it is gone.
 */
const realPath = (file: string): Promise<string> => realpath(file).catch(() => resolve(file));

function planNote(folder: RunHead): string {
  return folder.notes.find((n) => n.startsWith("plan.json")) ?? "plan.json: not a plan";
}

/** A named run that cannot be learned from: said at the file that is wrong, never as a stack. */
function unreadable(dir: string, folder: RunFolder): Problem {
  const nothing = folder.header === null && folder.events.length === 0;
  return error({
    code: "history-unreadable-run",
    message: nothing
      ? `${dir} is not a gpuplan run folder (no journal.jsonl, plan.json or events.jsonl could be read)`
      : `run ${basename(dir)} cannot be learned from: ${planNote(folder)}`,
    hint: "name run folders gpuplan run wrote (gpuplan runs lists them), or use --history auto",
    file: nothing ? dir : join(dir, "plan.json"),
  });
}

/** What of an own run could not be read (a torn events line, a missing journal): a warning at its file. */
function damageProblems(dir: string, folder: RunFolder, problems: Problem[]): void {
  for (const note of folder.notes) {
    // Each note starts with the name of the file in the run folder it is about.
    const name = note.slice(0, note.indexOf(":"));
    const atLine = folder.firstBadLines.get(name) ?? null;
    problems.push(
      warning({
        code: "history-damaged-run",
        message: `run ${basename(dir)}: ${note}; learned from what could be read`,
        file: join(dir, name),
        ...(atLine !== null && { line: atLine, column: 1 }),
      }),
    );
  }
}

function addSamples(folder: RunFolder, history: History): void {
  const plan = folder.plan!;
  const id = basename(folder.runDir);
  const templates = new Map(plan.pipelines.map((p) => [p.name, p.template]));
  // Where the plan put each step: a GPU step's attempt on the CPU (the on_oom fallback) timed the CPU.
  const onGpu = new Set(
    plan.pipelines.flatMap((p) =>
      p.steps.filter((s) => s.device !== "cpu").map((s) => `${p.name}\u0000${s.id}`),
    ),
  );
  const samples = (template: string, step: string): StepSamples => {
    const key = stepKey(template, step);
    let s = history.steps.get(key);
    if (!s) {
      s = {
        durationsMs: [],
        durationRuns: new Set(),
        peaksBytes: [],
        peakRuns: new Set(),
        budgetBytes: null,
      };
      history.steps.set(key, s);
    }
    return s;
  };
  for (const p of plan.pipelines) {
    for (const step of p.steps) {
      if (step.memoryBudgetBytes === null) continue;
      const s = samples(p.template, step.id);
      s.budgetBytes = Math.min(s.budgetBytes ?? step.memoryBudgetBytes, step.memoryBudgetBytes);
    }
  }
  // One duration per step of a pipeline and run, its last ok attempt's: a Slurm task requeued after
  // its step ended ok but before its journal said so runs the step again, and two durations of one
  // step would weigh it twice in the median. (Peaks feed a maximum: a repeat cannot skew it.)
  const okDurations = new Map<string, { s: StepSamples; ms: number }>();
  const largestGpu = largestGpuOf(plan);
  let impossible = 0;
  // The attempts as the report folds them, each with its own end: read from the end lines alone, an
  // end of attempt 1 written out of place (a merged or edited events.jsonl) after attempt 2 started
  // gave attempt 1's duration and peak as what the step took, where the report shows attempt 2.
  for (const { end: e } of foldRunEvents(folder.events).attempts) {
    if (e === null) continue;
    const template = templates.get(e.pipeline);
    if (template === undefined) continue;
    const s = samples(template, e.step);
    const key = `${e.pipeline}\u0000${e.step}`;
    // An ok attempt of a GPU step that ran on the CPU (its on_oom fallback) took the CPU's time, often
    // tens of times the GPU's: learned, it became the estimate of a step the plan puts on a GPU.
    if (e.status === "ok" && !(e.device === "cpu" && onGpu.has(key)))
      okDurations.set(key, { s, ms: e.durationMs });
    // A peak of 0 is a sampler that saw nothing of the step, not a step that held nothing: learned,
    // it replaced a typed vram with 0 (a budget of nothing, and CuPy's "no limit").
    if (e.peakVramBytes === undefined || e.peakVramBytes <= 0) continue;
    // A peak is of one GPU: more than the largest of the pipeline's is a reading gone wrong (or an
    // edited file), and as the maximum of the samples it alone would set the step's vram past
    // every card, so that compile finds no GPU for it.
    const most = largestGpu(e.pipeline);
    if (most > 0 && e.peakVramBytes > most) {
      impossible++;
      continue;
    }
    s.peaksBytes.push(e.peakVramBytes);
    s.peakRuns.add(id);
  }
  if (impossible > 0)
    history.notes.push(
      `run ${id}: ${impossible} peak reading(s) larger than the pipeline's largest GPU were not learned`,
    );
  for (const { s, ms } of okDurations.values()) {
    s.durationsMs.push(ms);
    s.durationRuns.add(id);
  }
}
