/**
 * `--resume RUN`: what an earlier run left in its directory — the plan it started with, where its
 * steps run, which pipelines it ran and which steps finished ok (a Slurm run's: in its tasks'
 * journals too) — so that only the rest runs again.
 */
import { lstatSync, statSync } from "node:fs";
import { join } from "node:path";
import type { DetectInventory } from "../../inventory/types.js";
import { checkPlan, parsePlanText } from "../../plan/read-plan.js";
import { UsageError } from "../../problems/errors.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";
import { hasErrors, type Problem } from "../../problems/problem.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";
import { openSbatchCalls, type SbatchCall } from "../../slurm/follow/sbatch-calls.js";
import { hasSlurmFolder } from "../../slurm/follow/slurm-folder.js";
import type { SourceFile } from "../../source/read-source-text.js";
import { type JournalStart, type JournalState, RUNS_DIR, readJournal, stepKey } from "../record/journal.js";
import { checkPlanDigest } from "../record/plan-digest.js";
import { damagedRun, kindOf, readRunFileBytes } from "../record/read-run-file.js";
import { runDirOf } from "../record/run-dir-of.js";
import { type RunLock, takeRunLock } from "../record/run-lock.js";
import { checkWorkingFolder } from "../record/working-folder.js";

export interface ResumedRun {
  plan: GpuplanPlan;
  baseDir: string;
  runId: string;
  runDir: string;
  /** Steps whose last attempt ended ok, keyed by stepKey. */
  completed: Set<string>;
  /** The pipelines the run was started with. */
  pipelines: string[];
  /** The highest attempt number each step has used (a resumed attempt is the next), by stepKey. */
  attempts: Map<string, number>;
  /**
   * Attempts whose processes may still run: those whose end was never recorded, and every attempt
   * of a step that runs again — something it started may have outlived its recorded end (a
   * process gpuplan could not end in time), and the step must not run beside it.
   */
  mayStillRun: JournalStart[];
  /**
   * sbatch calls of an earlier Slurm submission that no record accounts for (gpuplan was stopped
   * in it): arrays of them may be in Slurm without slurm/jobs.json naming them.
   */
  openSbatchCalls: SbatchCall[];
  /** Held from before the journal was read until the run ends. */
  runLock: RunLock;
  /** What the CLI says before the run: a plan.json resumed unchecked (no digest in the journal). */
  warnings: Problem[];
}

/**
 * The run named by `--resume` was submitted to Slurm (`run --executor slurm`): it resumes there
 * unless `--executor` says otherwise.
 */
export function isSlurmRun(resume: string): boolean {
  // Throws damaged-run where something other than a folder stands at slurm/: read as a local
  // run, one whose jobs may still be in Slurm would be run here beside them. A slurm/ without
  // jobs.json is a submission that failed before a record named its jobs: it resumes on Slurm.
  return hasSlurmFolder(resumedRunDir(resume));
}

/** Where the run named by `--resume` (an id in the runs directory, or a path: run-dir-of.ts) is. */
const resumedRunDir = (resume: string): string => runDirOf(resume);

/** A plan or pipeline file given with `--resume`, read as `gpuplan run` reads one (load-run-input.ts). */
export interface GivenInput {
  file: string;
  detect: DetectInventory;
  /** Check a plan's GPUs against the live machine (false for a Slurm run's). */
  verify: boolean;
}

/**
 * The run named by `--resume`; `given` is the input given now, if any (the run folder's plan.json
 * is the plan either way, and `given` must make that same plan). Problems when the plan kept in
 * the run directory is not a plan (any more), or the file given is not a plan or pipeline.
 */
export async function loadResumedRun(
  resume: string,
  given: GivenInput | undefined,
): Promise<ResumedRun | { problems: Problem[]; sources: SourceFile[] }> {
  const runDir = resumedRunDir(resume);
  refuseNonRunFolder(resume, runDir);
  // Before the journal is read: a gpuplan still running the folder may yet append to it.
  const runLock = await takeRunLock(runDir, resume);
  try {
    const state = await readJournal(runDir);
    refuseLinkedRecords(runDir);
    // The run's own copy is read like any plan: a damaged one is a located problem, not a crash.
    const planPath = join(runDir, "plan.json");
    const bytes = await readRunFileBytes(planPath, "plan");
    // Before the plan is parsed: a replaced plan.json is refused as changed, whatever it holds.
    const warnings = checkPlanDigest(planPath, bytes, state.header.planSha256, state.header.run);
    const stored = await checkPlan(await parsePlanText(planPath, bytes.toString("utf8")));
    if (!stored.plan) {
      await runLock.release();
      return { problems: stored.problems, sources: [stored.source] };
    }
    const { plan } = stored;
    const refused = given && (await checkSamePlan(given, plan, resume));
    if (refused) {
      await runLock.release();
      return refused;
    }
    // A Slurm run's tasks kept their own journals: what they completed is complete here too.
    const progress = statSync(join(runDir, "slurm"), { throwIfNoEntry: false })?.isDirectory()
      ? await (await import("../../slurm/follow/run-progress.js")).readSlurmRunProgress(runDir, state)
      : state;
    return {
      plan,
      baseDir: state.header.baseDir,
      runId: state.header.run,
      runDir,
      completed: progress.completed,
      pipelines: state.header.pipelines,
      attempts: progress.attempts,
      mayStillRun: mayStillRun(state, progress.completed),
      openSbatchCalls: openSbatchCalls(state.entries),
      runLock,
      warnings,
    };
  } catch (e) {
    await runLock.release();
    throw e;
  }
}

/**
 * `runDir` must be a folder: a missing one is no run, and a file or a device (`--resume
 * /dev/zero`) is said to be no run folder, rather than an ENOTDIR on a path inside it.
 */
function refuseNonRunFolder(resume: string, runDir: string): void {
  let info: ReturnType<typeof statSync>;
  try {
    info = statSync(runDir, { throwIfNoEntry: false });
  } catch (e) {
    // A path through a file (--resume a-file/x) leads nowhere: no run, as for a missing one.
    if (errnoOf(e) !== "ENOTDIR") throw fileError(e, runDir, "read", "the run folder");
  }
  if (info === undefined) {
    checkWorkingFolder();
    throw new UsageError(
      `--resume: no run ${resume} (looked in ${runDir})`,
      "unknown-run",
      `runs are in ${RUNS_DIR}/`,
    );
  }
  if (!info.isDirectory())
    throw new UsageError(
      `--resume: ${resume} is ${kindOf(info)}, not a run folder`,
      "unknown-run",
      `name a run by its id or its folder; gpuplan runs lists them (they are in ${RUNS_DIR}/)`,
    );
  // A folder with none of a run's files (`--resume .`, `--resume examples`, the runs folder) is
  // no run, damaged or not: said so before the run lock is taken, so that nothing (run.lock) is
  // left in a folder gpuplan never ran.
  if (!RUN_RECORDS.some((name) => isThere(join(runDir, name))))
    throw new UsageError(
      `--resume: ${resume} is not a run folder: it has none of ${RUN_RECORDS.slice(0, 3).join(", ")}`,
      "unknown-run",
      `name a run by its id or its folder; gpuplan runs lists them (they are in ${RUNS_DIR}/)`,
    );
}

/** An lstat that cannot answer (EACCES) leaves the folder to the checks that say why. */
function isThere(path: string): boolean {
  try {
    return lstatSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}

/** What a run folder has at least one of from its first moment (run.lock: a run starting now). */
const RUN_RECORDS = ["journal.jsonl", "plan.json", "events.jsonl", "run.lock"];

/**
 * The run's events and logs are appended to where they stand: a symbolic link in their place
 * (events.jsonl, logs/) would have the resume write into whatever it points at. The journal,
 * plan.json and run.lock are opened without following links (read-run-file.ts, run-lock.ts); log
 * files one by one (step-output.ts).
 */
function refuseLinkedRecords(runDir: string): void {
  for (const name of ["events.jsonl", "logs"]) {
    const path = join(runDir, name);
    if (lstatSync(path, { throwIfNoEntry: false })?.isSymbolicLink())
      throw damagedRun(path, "is a symbolic link");
  }
}

/** The attempts never seen to end, then the recorded attempts of the steps that are not complete. */
function mayStillRun(state: JournalState, completed: ReadonlySet<string>): JournalStart[] {
  const ended = state.entries.filter(
    (e): e is JournalStart =>
      e.type === "start" && !completed.has(stepKey(e.pipeline, e.step)) && !state.unfinished.includes(e),
  );
  return [...state.unfinished, ...ended];
}

/**
 * The pipelines without the GPU UUIDs of their steps: the run keeps the plan as bound to this
 * machine's GPUs (src/plan/verify-plan.ts), which names the live UUIDs where the file has the
 * planned ones — the same plan. Their `source` is kept as its pointer only: its path is relative
 * to where the plan lives (`../p.yaml#/pipelines/0` for plans/plan.json, `p.yaml#…` compiled in
 * memory), and the same pipeline file run either way is the same plan.
 */
function unbound(pipelines: GpuplanPlan["pipelines"] | undefined): unknown {
  return pipelines?.map((p) => ({
    ...p,
    source: p.source === undefined ? undefined : pointerOf(p.source),
    steps: p.steps.map((s) => ({ ...s, source: pointerOf(s.source), uuid: null })),
  }));
}

/** `file#/pointer` → `#/pointer` (a JSON pointer has no `#`, a file name may). */
const pointerOf = (source: string): string => source.slice(source.lastIndexOf("#"));

/**
 * A resumed run runs the plan it started with (stored in its directory), so that a pipeline file
 * compiled in memory cannot change under it. A file given now — a plan, or a pipeline file
 * compiled against this machine as `gpuplan run` would compile it — must make that same plan:
 * a pipeline edited since (the `Resume with:` line names it) is refused, never quietly ignored
 * while the old commands run. Its problems (missing, unreadable, invalid) are returned.
 */
async function checkSamePlan(
  given: GivenInput,
  stored: GpuplanPlan,
  run: string,
): Promise<{ problems: Problem[]; sources: SourceFile[] } | undefined> {
  const { loadRunInput } = await import("./load-run-input.js");
  const input = await loadRunInput(given.file, given.detect, { verify: given.verify });
  if (hasErrors(input.problems) || !input.plan) return { problems: input.problems, sources: input.sources };
  if (JSON.stringify(unbound(input.plan.pipelines)) !== JSON.stringify(unbound(stored.pipelines))) {
    const what = input.kind === "pipeline" ? `${given.file} compiles to` : given.file;
    throw new UsageError(
      `--resume: run ${run} was started from a different plan than ${what}`,
      "resume-plan-changed",
      `resume without the file (the run keeps the plan it started with as plan.json), or start a new run without --resume`,
    );
  }
  return undefined;
}
