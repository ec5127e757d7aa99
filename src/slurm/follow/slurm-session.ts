/**
 * `gpuplan run --executor slurm`: the run folder, journal, events and view of a local run, with
 * Slurm in the executor's place. The plan's pipelines (on --resume: those that did not complete)
 * become job arrays as `gpuplan export` writes them, rendered into the run folder's slurm/ and
 * submitted with sbatch; then (unless --detach) the arrays are followed to their end
 * (follow-arrays.ts) and the run ends as a local one does: its summary from the same tally of the
 * same events, a run.end, the journal's end entry.
 */
import { rm } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { writeFileAtomic } from "../../plan/write-atomic.js";
import { UsageError, VendorError } from "../../problems/errors.js";
import { errnoOf } from "../../problems/file-errors.js";
import { hasErrors } from "../../problems/problem.js";
import { createTally, type RunSummary, summarize, tallyEvent } from "../../run/outcome/run-tally.js";
import type { PreparedRun } from "../../run/prepare/prepare-run.js";
import { makeRunId } from "../../run/prepare/run-id.js";
import { openEventFiles } from "../../run/record/event-files.js";
import { type EventDraft, RUN_EVENTS_SCHEMA, type RunEvent, stampEvent } from "../../run/record/events.js";
import { createOwnRunDir, type Journal, openJournal, stepKey } from "../../run/record/journal.js";
import {
  isJournalDeleted,
  type RecordFailure,
  type RecordFailures,
  recordFailures,
} from "../../run/record/record-failures.js";
import { recordRunEnd } from "../../run/record/record-run-end.js";
import { takeRunLock } from "../../run/record/run-lock.js";
import type { StreamSink } from "../../run/record/stream-target.js";
import type { OpenRunView } from "../../run/run-view.js";
import { bootIdEntry } from "../../run/step/boot-id.js";
import type { GpuplanPlan, PlannedPipeline } from "../../schema-types/plan.js";
import { displayText } from "../../text/safe-text.js";
import { shellWord } from "../../text/shell-word.js";
import { sbatchOverrides } from "../command-environment.js";
import { exportPlanToSlurm, type SlurmExport, type SlurmExportInput } from "../export-plan.js";
import type { RunCommand } from "../read-cluster.js";
import { cancel, followArrays } from "./follow-arrays.js";
import { checkRecordRoom } from "./record-room.js";
import { findJobHolder, repeatedJobIdError } from "./repeated-job-id.js";
import {
  makeSlurmDirs,
  readSlurmRecord,
  recordArrays,
  restoreRecord,
  type SlurmRunRecord,
  type SubmittedArray,
  slurmDir,
  taskEndings,
} from "./run-record.js";
import { recordedEntry, sbatchEntry } from "./sbatch-calls.js";
import { sortEventsFile } from "./sort-events-file.js";
import { submitFailedEnd } from "./submit-failure.js";

export type SubmissionInput = Omit<SlurmExportInput, "plan" | "outDir" | "planFile">;

export interface Submission {
  /** The run folder, absolute: the scripts name it. */
  runDir: string;
  export: SlurmExport;
  /** The pipelines the arrays run. */
  submitted: PlannedPipeline[];
  /** Pipelines an earlier attempt of the run completed (--resume): not submitted again. */
  completed: PlannedPipeline[];
  /** What it was planned from: a new run whose id another run took is planned again in its own folder. */
  input: SubmissionInput;
  completedNames: ReadonlySet<string>;
}

/** The arrays a run submits, as data (what --dry-run prints); `completedPipelines` are left out. */
export function planSubmission(
  prepared: PreparedRun,
  input: SubmissionInput,
  completedPipelines: ReadonlySet<string>,
  cwd = process.cwd(),
): Submission {
  const runDir = isAbsolute(prepared.runDir) ? prepared.runDir : resolve(cwd, prepared.runDir);
  const submitted = prepared.pipelines.filter((p) => !completedPipelines.has(p.name));
  const completed = prepared.pipelines.filter((p) => completedPipelines.has(p.name));
  const plan: GpuplanPlan = { ...prepared.plan, pipelines: submitted };
  const exported = exportPlanToSlurm({
    ...input,
    plan,
    outDir: slurmDir(runDir),
    planFile: join(runDir, "plan.json"),
    taskOfRun: true,
  });
  return { runDir, export: exported, submitted, completed, input, completedNames: completedPipelines };
}

/**
 * Pipelines a resumed Slurm run need not run again: every step ok in the run's journals (what a
 * follower recorded, what each task recorded itself), or their last task's own run.end said ok (a
 * run folder from before tasks kept journals). The others are submitted again, and their tasks
 * skip the steps that completed.
 */
export async function completedPipelines(
  prepared: PreparedRun,
  /** The run's record, where the caller has read it already. */
  record?: SlurmRunRecord,
): Promise<Set<string>> {
  const done = new Set<string>();
  if (!prepared.resumed) return done;
  const endings = await taskEndings(prepared.runDir, record);
  for (const p of prepared.pipelines) {
    const allOk = p.steps.every((s) => prepared.completed.has(stepKey(p.name, s.id)));
    if (allOk || endings.get(p.name) === "ok") done.add(p.name);
  }
  return done;
}

export interface SlurmSessionOptions {
  input: string;
  eventsFile?: string;
  /**
   * `--events` names a stream gpuplan already has and cannot open anew (a socket as stdout, as
   * under systemd or a Node parent's pipes): written through this, as a local run does.
   */
  eventsSink?: StreamSink;
  /** The view, as the CLI chose it (UI mode, colour level, where it writes). */
  openView: OpenRunView;
  /** A record file's first write failure (an --events reader gone, a full disk), as it happens. */
  onRecordFailure?: (failure: RecordFailure) => void;
  /** The arrays are done and the `--events` reader has kept the end waiting a second: its path and the bytes it has yet to take. */
  onWaitForEventsReader?: (path: string, pendingBytes: number) => void;
  detach: boolean;
  requeue: boolean;
  slurm: RunCommand;
  /** `NAME=VALUE` arguments every script gets: gpuplan's settings for the tasks (taskSettings). */
  taskSettings?: readonly string[];
  signal: AbortSignal;
  sharedFolderTimeoutMs: number;
  pollMs?: { min: number; max: number };
  /**
   * A resume's record (slurm/jobs.json) as its caller read it, under the run's lock it still
   * holds: the room check, the repeated-id check and the record written after sbatch all start
   * from it (read here where not given).
   */
  record?: SlurmRunRecord;
}

export type SlurmSessionResult = (
  | { kind: "detached"; arrays: SubmittedArray[] }
  | {
      kind: "followed";
      arrays: SubmittedArray[];
      summary: RunSummary;
      recordsIncomplete: RecordFailure[];
      /** After an interrupt, how scancel failed: the jobs may still be queued or running. */
      cancelFailed?: string;
    }
) & {
  /** The run's id and folder (absolute): a new run whose id another run took drew another. */
  runId: string;
  runDir: string;
};

export async function runOnSlurm(
  given: PreparedRun,
  planned: Submission,
  options: SlurmSessionOptions,
): Promise<SlurmSessionResult> {
  if (hasErrors(planned.export.problems)) throw new Error("runOnSlurm: the submission has errors");
  // Before a new run's folder is made; a resume's lock (held by its caller) keeps the record as read.
  const recorded = given.resumed ? (options.record ?? (await readSlurmRecord(planned.runDir))).arrays : [];
  checkRecordRoom(given.resumed ? { run: given.runId, recorded } : null, planned.export.arrays);
  const { prepared, submission, planSha256 } = given.resumed
    ? { prepared: given, submission: planned, planSha256: undefined }
    : await createOwnSlurmRunDir(given, planned);
  const { runId } = prepared;
  const { runDir } = submission;
  // Held while the jobs are submitted and followed, as a local run holds it: `gpuplan runs
  // --prune` must not take the folder between the first sbatch and slurm/jobs.json naming the
  // jobs (from there it asks Slurm), nor may a second gpuplan submit the run meanwhile. A resume
  // holds it already (since it read the journal, through the check that no task is in Slurm),
  // and its caller lets it go.
  const runLock = given.runLock ? null : await takeRunLock(runDir, runId);
  let discard = false;
  try {
    await makeSlurmDirs(runDir);
    return {
      ...(await submitAndFollow(prepared, submission, options, planSha256, recorded)),
      runId,
      runDir,
    };
  } catch (e) {
    // A new run whose first sbatch was refused has nothing on Slurm and never will: its folder
    // read as a run gpuplan was killed in ('unfinished', resumable, the newest for report),
    // and `status` said it did not run on Slurm. Like --dry-run, such a run leaves no folder.
    discard = e instanceof NothingSubmitted && !prepared.resumed;
    throw e instanceof NothingSubmitted || e instanceof SubmissionFailed ? e.refusal : e;
  } finally {
    await runLock?.release();
    if (discard) await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * A new run's folder, made as a local run's is (createOwnRunDir: where another run took its id,
 * two started in the same second, it draws another). The scripts name the folder, so a run that
 * drew another id has its submission planned again there.
 */
async function createOwnSlurmRunDir(
  prepared: PreparedRun,
  submission: Submission,
): Promise<{ prepared: PreparedRun; submission: Submission; planSha256: string }> {
  const own = await createOwnRunDir(prepared.runId, submission.runDir, prepared.plan, undefined, makeRunId);
  if (own.runId === prepared.runId) return { prepared, submission, planSha256: own.planSha256 };
  const moved = { ...prepared, runId: own.runId, runDir: join(dirname(prepared.runDir), own.runId) };
  return {
    prepared: moved,
    submission: planSubmission({ ...moved, runDir: own.runDir }, submission.input, submission.completedNames),
    planSha256: own.planSha256,
  };
}

type DistributiveOmit<T, K extends PropertyKey> = T extends unknown ? Omit<T, K> : never;

/** sbatch refused the first array: nothing of the run was submitted. */
class NothingSubmitted extends Error {
  constructor(readonly refusal: VendorError | UsageError) {
    super(refusal.message);
  }
}

/**
 * The submission failed once sbatch had been called for it (a later array refused, a job id the
 * run names already, no job id printed): the arrays it queued were cancelled. `mayRun`: some may
 * be in Slurm all the same (scancel failed, or an sbatch's answer was lost).
 */
class SubmissionFailed extends Error {
  constructor(
    readonly refusal: VendorError | UsageError,
    readonly mayRun: boolean,
  ) {
    super(refusal.message);
  }
}

async function submitAndFollow(
  prepared: PreparedRun,
  submission: Submission,
  options: SlurmSessionOptions,
  planSha256: string | undefined,
  /** The arrays the run's record names (none for a new run): a job id among them is refused. */
  recorded: readonly SubmittedArray[],
): Promise<DistributiveOmit<SlurmSessionResult, "runId" | "runDir">> {
  const { pipelines, runId } = prepared;
  const { runDir } = submission;
  // The journal is watched as a local run's is: one deleted with its run folder (its link count
  // found 0 at a write) leaves --resume nothing to go on, and the summary must not offer it.
  const failures = recordFailures(options.onRecordFailure);
  // Each write the journal could not make: an sbatch entry that is not on disk is no sbatch.
  const refused: string[] = [];
  const journal = await openJournal(runDir, {
    ...failures,
    failed: (file, e) => {
      refused.push(errnoOf(e) ?? (e instanceof Error ? e.message : String(e)));
      failures.failed(file, e);
    },
    lost: (file, e) => {
      refused.push(errnoOf(e) ?? (e instanceof Error ? e.message : String(e)));
      failures.lost(file, e);
    },
  });
  try {
    if (!prepared.resumed) {
      await journal.append({
        type: "run",
        run: runId,
        startedAt: new Date().toISOString(),
        input: options.input,
        baseDir: prepared.baseDir,
        pipelines: pipelines.map((p) => p.name),
        ...(planSha256 !== undefined && { planSha256 }),
        ...bootIdEntry(),
      });
    }
    for (const f of submission.export.files) {
      const path = join(slurmDir(runDir), f.name);
      await writeFileAtomic(path, f.text, "file", undefined, "chosen");
    }
    let arrays: SubmittedArray[];
    try {
      arrays = await submitArrays(submission, options.slurm, options.taskSettings ?? [], {
        run: runId,
        recorded,
        journal,
        refused,
      });
    } catch (e) {
      // Every array of it cancelled, and the failed sbatch certainly queued nothing: no call
      // before this is left for a resume to look for in Slurm (unrecorded-arrays.ts).
      if (e instanceof NothingSubmitted || (e instanceof SubmissionFailed && !e.mayRun))
        await journal.append(recordedEntry([]));
      // No record names the run's jobs: without a word in its journal, the run read as one
      // gpuplan was killed in, resumed here (submit-failure.ts).
      if (e instanceof SubmissionFailed && recorded.length === 0)
        await journal.append(
          submitFailedEnd(
            submission.submitted.map((p) => p.name),
            { reason: e.refusal.message, mayRun: e.mayRun },
          ),
        );
      throw e;
    }
    // Each array is in slurm/jobs.json since its sbatch answered: the sbatch entries are settled.
    await journal.append(recordedEntry(arrays.map((a) => a.job)));
    if (options.detach) return { kind: "detached", arrays };
    const { summary, cancelFailed } = await follow(prepared, submission, arrays, journal, failures, options);
    return {
      kind: "followed",
      arrays,
      summary,
      recordsIncomplete: failures.incomplete(),
      ...(cancelFailed !== undefined && { cancelFailed }),
    };
  } finally {
    await journal.close();
  }
}

interface SubmitContext {
  run: string;
  /** The arrays the run's record names (none for a new run): a job id among them is refused. */
  recorded: readonly SubmittedArray[];
  journal: Journal;
  /** Why each journal write so far failed (ENOSPC): grows where an entry did not reach the disk. */
  refused: readonly string[];
}

/**
 * sbatch each script, each array recorded in slurm/jobs.json as soon as its sbatch answers and an
 * `sbatch` journal entry flushed before each call: gpuplan killed at any point leaves no array in
 * Slurm that neither names (unrecorded-arrays.ts). A refusal cancels the arrays submitted before it,
 * puts the record back as it was and says what sbatch said.
 */
async function submitArrays(
  submission: Submission,
  slurm: RunCommand,
  settings: readonly string[],
  run: SubmitContext,
): Promise<SubmittedArray[]> {
  const arrays: SubmittedArray[] = [];
  try {
    for (const a of submission.export.arrays) await submitArray(a, submission, slurm, settings, run, arrays);
  } catch (e) {
    // The arrays it recorded were cancelled (or scancel failed: the sbatch entries stay open).
    if (arrays.length > 0 && (e instanceof SubmissionFailed || e instanceof NothingSubmitted))
      await restoreRecord(submission.runDir, run.recorded);
    throw e;
  }
  return arrays;
}

/** sbatch of one script, its array recorded after `arrays` (pushed to it). */
async function submitArray(
  a: SlurmExport["arrays"][number],
  submission: Submission,
  slurm: RunCommand,
  settings: readonly string[],
  run: SubmitContext,
  arrays: SubmittedArray[],
): Promise<void> {
  const script = join(slurmDir(submission.runDir), a.script);
  // What the script says must hold: the variables that would override its directives are unset.
  const text = submission.export.files.find((f) => f.name === a.script)?.text ?? "";
  const failedBefore = run.refused.length;
  await run.journal.append(sbatchEntry(a.script, script, a.pipelines));
  if (run.refused.length > failedBefore) {
    // A resume after gpuplan was stopped looks for an unrecorded array by this entry alone.
    const ours = arrays.map((s) => s.job);
    const cancelFailed = await cancel(slurm, ours);
    const refusal = new UsageError(
      `cannot write the run's journal (${run.refused.at(-1)}), so sbatch was not called for ${a.script}: gpuplan submits an array only once its journal says so${
        ours.length === 0
          ? ""
          : cancelFailed === null
            ? ` (the ${ours.length} array(s) submitted before it were cancelled)`
            : ` (cancelling the ${ours.length} array(s) submitted before it failed, ${cancelFailed}: scancel ${ours.join(" ")})`
      }`,
      "records-incomplete",
      `free some space (df -h), then submit again${ours.length === 0 ? "" : ` (gpuplan run --resume ${shellWord(run.run)} --executor slurm)`}`,
    );
    throw ours.length === 0
      ? new NothingSubmitted(refusal)
      : new SubmissionFailed(refusal, cancelFailed !== null);
  }
  const out = await slurm("sbatch", ["--parsable", script, ...settings], {
    unsetEnv: sbatchOverrides(text),
  });
  const job = out.status === 0 ? parsableJobId(out.stdout) : undefined;
  if (out.status !== 0 || job === undefined) {
    const cancelFailed = await cancel(
      slurm,
      arrays.map((s) => s.job),
    );
    const before =
      arrays.length === 0
        ? ""
        : cancelFailed === null
          ? ` (the ${arrays.length} array(s) submitted before it were cancelled)`
          : ` (cancelling the ${arrays.length} array(s) submitted before it failed, ${cancelFailed}: scancel ${arrays.map((s) => s.job).join(" ")})`;
    if (out.status === 0)
      throw new SubmissionFailed(unreadableJobId(a.script, a.jobName, script, out.stdout, before), true);
    const said = out.stderr.trim().split("\n").slice(-3).join(" / ") || out.failure || "(no message)";
    // Only an sbatch that ended by itself with an error (or was not there) certainly submitted
    // nothing; one killed by a signal, past its time limit or stopped may have been answered by
    // slurmctld, and its run folder is where such an array's tasks would write.
    const certain = out.failure === "not-found" || (out.status !== null && out.failure === undefined);
    const nothing = arrays.length === 0 && certain;
    const mayRun = cancelFailed !== null || !certain;
    const resume = `gpuplan run --resume ${shellWord(run.run)} --executor slurm submits the run again`;
    const refusal = new VendorError(
      `sbatch refused ${a.script}${arrays.length > 0 ? before : nothing ? ": nothing was submitted" : ""}`,
      out.failure === "not-found" ? "slurm-not-found" : "slurm-command-failed",
      `sbatch --parsable ${script}`,
      displayText(said, 400),
      `check the request in the script (gpuplan run --executor slurm --dry-run prints it) against sinfo / scontrol show partition${
        nothing
          ? ""
          : mayRun
            ? `; once no array of it is in Slurm (squeue --me), ${resume}`
            : `; then ${resume}`
      }`,
    );
    throw nothing ? new NothingSubmitted(refusal) : new SubmissionFailed(refusal, mayRun);
  }
  const holder = findJobHolder(job, run.recorded, arrays);
  if (holder !== undefined) {
    const ours = [...new Set([...arrays.map((s) => s.job), job])];
    const cancelFailed = await cancel(slurm, ours);
    const repeated = repeatedJobIdError({
      run: run.run,
      script: a.script,
      jobName: a.jobName,
      call: `sbatch --parsable ${script}`,
      stdout: out.stdout,
      job,
      ...holder,
      cancelled: ours,
      cancelFailed,
    });
    throw new SubmissionFailed(repeated, cancelFailed !== null);
  }
  arrays.push({ job, script: a.script, pipelines: a.pipelines });
  await recordArrays(submission.runDir, run.recorded, arrays);
}

/**
 * The job id `sbatch --parsable` printed: the last line that is only `ID` or `ID;CLUSTER`. A site's
 * wrapper may print notices before it (a maintenance window), which are not the id.
 */
function parsableJobId(stdout: string): string | undefined {
  const lines = stdout.split("\n").map((l) => l.trim());
  for (const line of lines.reverse()) {
    const id = /^([0-9]+)(;[A-Za-z0-9_.-]+)?$/.exec(line)?.[1];
    if (id !== undefined) return id;
  }
  return undefined;
}

/** sbatch said it submitted the script but printed no job id: it may be queued, and nobody can cancel it by id. */
function unreadableJobId(
  name: string,
  jobName: string,
  script: string,
  stdout: string,
  /** What became of the arrays submitted before it: "" when none were. */
  before: string,
): VendorError {
  const said = stdout.trim().split("\n").slice(-3).join(" / ") || "(nothing)";
  return new VendorError(
    `sbatch accepted ${name} but printed no job id gpuplan can read, so the array may be queued without this run knowing it${before}`,
    "slurm-command-failed",
    `sbatch --parsable ${script}`,
    `stdout: ${displayText(said, 400)}`,
    `find it with squeue --me -n ${jobName} and scancel it; sbatch --parsable must print the job id on a line of its own (a wrapper's notices may come before it)`,
  );
}

async function follow(
  prepared: PreparedRun,
  submission: Submission,
  arrays: SubmittedArray[],
  journal: Awaited<ReturnType<typeof openJournal>>,
  failures: RecordFailures,
  options: SlurmSessionOptions,
): Promise<{ summary: RunSummary; cancelFailed?: string }> {
  const { plan, pipelines, runId } = prepared;
  const { runDir } = submission;
  const events = openEventFiles(
    [join(runDir, "events.jsonl"), ...(options.eventsFile ? [options.eventsFile] : [])],
    failures,
    // Opening /dev/stdout anew fails for a socket (ENXIO): it read as a FIFO nobody reads, and
    // every event was dropped without a word.
    options.eventsFile && options.eventsSink
      ? { sinks: new Map([[options.eventsFile, options.eventsSink]]) }
      : {},
  );
  const view = await options.openView({ plan, pipelines: pipelines.map((p) => p.name) });
  let tally = createTally(pipelines);
  const pending: Promise<void>[] = [];
  const emit = (e: RunEvent | EventDraft): void => {
    const event = "ts" in e ? e : stampEvent(runId, e);
    tally = tallyEvent(tally, event);
    events.write(event);
    view.onEvent(event);
    if (event.event === "gpu.step.end")
      pending.push(
        journal.append({
          type: "step",
          ts: event.ts,
          pipeline: event.pipeline,
          step: event.step,
          status: event.status,
          attempt: event.attempt,
          device: event.device,
          exitCode: event.exitCode,
          durationMs: event.durationMs,
        }),
      );
  };
  const started = performance.now();
  let interrupted = false;
  let cancelFailed: string | undefined;
  try {
    emit({
      event: "run.start",
      pipeline: null,
      step: null,
      device: null,
      schema: RUN_EVENTS_SCHEMA,
      pipelines: pipelines.map((p) => p.name),
      runDir: prepared.runDir,
    });
    for (const p of submission.completed)
      for (const s of p.steps)
        emit({
          event: "gpu.step.skip",
          pipeline: p.name,
          step: s.id,
          device: s.device,
          reason: "completed in an earlier attempt of this run",
          cause: "completed",
        });
    for (const a of arrays)
      emit({
        event: "slurm.submit",
        pipeline: null,
        step: null,
        device: null,
        job: a.job,
        script: a.script,
        pipelines: a.pipelines,
      });
    const result = await followArrays({
      run: runId,
      runDir,
      arrays,
      pipelines: new Map(submission.submitted.map((p) => [p.name, p])),
      completed: prepared.completed,
      earlierAttempts: prepared.attempts,
      slurm: options.slurm,
      emit,
      signal: options.signal,
      requeue: options.requeue,
      sharedFolderTimeoutMs: options.sharedFolderTimeoutMs,
      ...(options.pollMs && { pollMs: options.pollMs }),
    });
    interrupted = result.interrupted;
    cancelFailed = result.cancelFailed;
  } catch (e) {
    await view.close(summarize(tally)).catch(() => undefined);
    await events.close({ stop: options.signal });
    throw e;
  }
  await Promise.all(pending);
  await recordRunEnd(journal, emit, {
    pipelines: pipelines.map((p) => p.name),
    interrupted,
    tally,
    startedMs: started,
  });
  // Jobs scancel could not cancel keep the run folder theirs: --resume is refused while they are in
  // Slurm (refuseWhileActive), so the summary must not offer it as the next step without them.
  const [first, ...more] = arrays.map((a) => a.job);
  const summary: RunSummary = {
    ...summarize(tally),
    ...(cancelFailed !== undefined && first !== undefined && { uncancelledJobs: [first, ...more] }),
  };
  // The journal's end was written (and its link count asked) by now: a deleted one is known.
  await view.close(summary, { resumable: !isJournalDeleted(failures.incomplete()) });
  await events.close({
    stop: options.signal,
    ...(options.onWaitForEventsReader && { onWait: options.onWaitForEventsReader }),
  });
  await sortEventsFile(join(runDir, "events.jsonl"));
  return { summary, ...(cancelFailed !== undefined && { cancelFailed }) };
}
