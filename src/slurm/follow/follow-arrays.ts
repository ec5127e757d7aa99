/**
 * Follows submitted job arrays to their end, the way a local run's executor runs pipelines: it
 * polls squeue (with back-off: quick while things change, up to every few seconds while nothing
 * does; never `sbatch --wait`, which backs off to 10 s and more), reads each task's events file as
 * it grows and passes its events on in time order, says when a task is pending, running on a node
 * and GPU, or ended in Slurm's words, and closes out a pipeline whose task Slurm ended without
 * gpuplan's account (task-ending.ts). An interrupt cancels every array (scancel). A task that runs
 * but whose start marker never shows up in the run folder means the folder is not shared with the
 * nodes: the arrays are cancelled and the run stops with that problem.
 */
import { readdirSync } from "node:fs";
import { basename, join } from "node:path";
import { append } from "../../lists/append.js";
import { UsageError, VendorError } from "../../problems/errors.js";
import { type EventDraft, type RunEvent, stampEvent } from "../../run/record/events.js";
import { stepKey } from "../../run/record/journal.js";
import type { PlannedPipeline } from "../../schema-types/plan.js";
import { displayText } from "../../text/safe-text.js";
import { type CommandOutput, noAnswer, type RunCommand } from "../read-cluster.js";
import { readTaskFile } from "./read-task-file.js";
import { readStartMarker, type SubmittedArray, slurmDir } from "./run-record.js";
import { type SacctAnswer, sacctTaskStates } from "./sacct-tasks.js";
import { isFinalState, parseSqueue, squeueCalls, type TaskState } from "./squeue-tasks.js";
import { closeOutPipeline, type StepProgress, slurmEnding } from "./task-ending.js";
import { createTaskEventReader } from "./task-events.js";

export interface FollowInput {
  run: string;
  /** The run folder, as the tasks' scripts name it (absolute). */
  runDir: string;
  arrays: readonly SubmittedArray[];
  /** The pipelines of those arrays, by name. */
  pipelines: ReadonlyMap<string, PlannedPipeline>;
  /** Steps an earlier attempt of the run completed (stepKey): their tasks skip them. */
  completed?: ReadonlySet<string>;
  /** The highest attempt each step used before (stepKey): a task Slurm ended is closed out with the next. */
  earlierAttempts?: ReadonlyMap<string, number>;
  slurm: RunCommand;
  /** Task events (already stamped by their task) and the follower's own drafts. */
  emit: (event: RunEvent | EventDraft) => void;
  signal?: AbortSignal;
  /** NODE_FAIL is not the end of a task that Slurm requeues. */
  requeue: boolean;
  /** How long a running task may go without its start marker showing up here. */
  sharedFolderTimeoutMs: number;
  pollMs?: { min: number; max: number };
}

export interface FollowResult {
  interrupted: boolean;
  /** After an interrupt: how scancel failed (`scancel failed (exit 1: …)`), when it did; the jobs may still run. */
  cancelFailed?: string;
}

/** Slurm's states in which a task holds (or held) its node: it must have written its marker by then. */
const STARTED = /^(RUNNING|COMPLETING|COMPLETED|FAILED|TIMEOUT|OUT_OF_MEMORY|SUSPENDED|STOPPED)$/;
/** After Slurm says a task ended, how long its last events may take to show up (NFS caches attributes). */
const EVENTS_GRACE_MS = 3000;
/** A task squeue stopped listing this many polls in a row is gone from its memory (MinJobAge). */
const FORGOTTEN_POLLS = 3;
/** squeue may fail now and then (slurmctld busy, restarting); give up after this long of failures. */
const SQUEUE_OUTAGE_MS = 120_000;

interface Tracked {
  name: string;
  array: SubmittedArray;
  pipeline: PlannedPipeline;
  /** What the last slurm.task event said, to emit only changes. */
  said: string;
  state: TaskState | null;
  /** ms when it was first seen started (or ended); the marker must show up within the timeout. */
  startedSeenMs: number | null;
  marker: { node: string; gpus: string | null } | null;
  /** The task's events said run.end. */
  eventsEnded: boolean;
  /** Polls in a row squeue did not list it (a finished job ages out after MinJobAge). */
  unlisted: number;
  /** Its own job id, as squeue said it (the job completion log knows it by this). */
  rawJob: string | null;
  /** The task's events from its first interrupted step on, held until Slurm says why (null: none held). */
  held: RunEvent[] | null;
  /** Its events ended and Slurm said how the task ended (or forgot it), or the follower closed it out. */
  done: boolean;
  finalSeenMs: number | null;
  progress: Map<string, StepProgress>;
  /** Steps whose end this follow saw ok (a requeued run of the task skips them again). */
  endedOk: Set<string>;
}

export async function followArrays(input: FollowInput): Promise<FollowResult> {
  const { min, max } = input.pollMs ?? { min: 200, max: 5000 };
  const reader = createTaskEventReader(input.run, input.runDir);
  const tasks: Tracked[] = [];
  for (const array of input.arrays) {
    for (const [i, name] of array.pipelines.entries()) {
      const pipeline = input.pipelines.get(name);
      if (!pipeline) continue;
      tasks.push({
        name: `${array.job}_${i}`,
        array,
        pipeline,
        said: "",
        state: null,
        startedSeenMs: null,
        marker: null,
        eventsEnded: false,
        held: null,
        unlisted: 0,
        rawJob: null,
        done: false,
        finalSeenMs: null,
        endedOk: new Set(),
        progress: new Map(
          pipeline.steps
            .filter((st) => input.completed?.has(stepKey(name, st.id)))
            .map((st) => [st.id, { phase: "settled" }] as const),
        ),
      });
    }
  }
  const jobs = input.arrays.map((a) => a.job);
  const taskCounts = new Map(input.arrays.map((a) => [a.job, a.pipelines.length]));
  let delay = min;
  let failingSince: number | null = null;
  let sacctUnanswered = false;
  const unanswered = (command: "squeue" | "sacct", message: string): void =>
    input.emit({ event: "slurm.unanswered", pipeline: null, step: null, device: null, command, message });
  while (tasks.some((t) => !t.done)) {
    if (input.signal?.aborted) {
      const cancelFailed = await cancel(input.slurm, jobs);
      await drainAfterCancel(input, tasks, reader);
      return { interrupted: true, ...(cancelFailed !== null && { cancelFailed }) };
    }
    const out = await squeue(input.slurm, jobs);
    // An interrupt stops a squeue under way (the CLI's runner): cancel now, not after a poll.
    if (input.signal?.aborted) continue;
    // Monotonic: it times an outage and the wait for a start marker, over hours of following,
    // which a wall clock stepped forward (NTP) would cut short.
    const now = performance.now();
    if (out.status !== 0) {
      // Said once as an outage starts: a hung squeue costs a poll its whole time limit.
      if (failingSince === null)
        unanswered("squeue", `${describeFailure("squeue", out)}; asking again (the jobs go on in Slurm)`);
      failingSince ??= now;
      if (now - failingSince > SQUEUE_OUTAGE_MS) throw squeueFailure(out.stderr, out.failure);
    } else {
      failingSince = null;
      const states = new Map(parseSqueue(out.stdout, taskCounts).map((s) => [`${s.job}_${s.task}`, s]));
      const sacct = await forgottenEndings(input.slurm, tasks, states);
      for (const [name, s] of sacct.states) states.set(name, s);
      if (sacct.unanswered !== null && !sacctUnanswered)
        unanswered(
          "sacct",
          `${sacct.unanswered}: how a task squeue no longer lists ended is not known yet; asking again`,
        );
      if (sacct.asked) sacctUnanswered = sacct.unanswered !== null;
      const changed = poll(input, tasks, states, reader, now);
      delay = changed ? min : Math.min(max, Math.round(delay * 1.5));
      const unshared = tasks.find(
        (t) =>
          t.marker === null &&
          t.startedSeenMs !== null &&
          now - t.startedSeenMs > input.sharedFolderTimeoutMs,
      );
      if (unshared) {
        const cancelFailed = await cancel(input.slurm, jobs);
        const cancelled =
          cancelFailed === null
            ? "the arrays were cancelled"
            : `cancelling the arrays failed, ${cancelFailed}: scancel ${jobs.join(" ")}`;
        throw new UsageError(
          `Slurm ran task ${unshared.name} (pipeline ${displayText(unshared.pipeline.name, 80)}) on ${displayText(unshared.state?.node ?? "a node", 80)}, but the marker it writes first never showed up in ${join(input.runDir, "slurm", "started")} within ${Math.round(input.sharedFolderTimeoutMs / 1000)} s: the run folder must be on a filesystem shared with the nodes (${cancelled})`,
          "slurm-run-folder-not-shared",
          "run gpuplan from a folder the compute nodes mount too (a shared home or project filesystem, not /tmp or a local disk)",
        );
      }
      if (!tasks.some((t) => !t.done)) break;
    }
    await sleep(delay, input.signal);
  }
  return { interrupted: false };
}

/** Polls between two sacct look-ups of a task squeue forgot while sacct did not know its end either. */
const SACCT_RETRY_POLLS = 10;

/**
 * How the tasks squeue no longer lists (MinJobAge passed) ended, from sacct (sacct-tasks.ts),
 * for those whose end gpuplan has not seen yet; noting each task's own job id while squeue lists it.
 */
async function forgottenEndings(
  slurm: RunCommand,
  tasks: readonly Tracked[],
  states: ReadonlyMap<string, TaskState>,
): Promise<SacctAnswer & { asked: boolean }> {
  const forgotten: Tracked[] = [];
  for (const t of tasks) {
    const listed = states.get(t.name);
    if (listed?.rawJob) t.rawJob = listed.rawJob;
    if (t.done || listed || (t.state && isFinalState(t.state.state))) continue;
    const polls = t.unlisted + 1 - FORGOTTEN_POLLS;
    if (polls >= 0 && polls % SACCT_RETRY_POLLS === 0) forgotten.push(t);
  }
  const answer = await sacctTaskStates(
    slurm,
    forgotten.map((t) => ({ name: t.name, rawJob: t.rawJob })),
  );
  return { ...answer, asked: forgotten.length > 0 };
}

/** One look at squeue's states and the tasks' files; true when anything changed. */
function poll(
  input: FollowInput,
  tasks: Tracked[],
  states: ReadonlyMap<string, TaskState>,
  reader: ReturnType<typeof createTaskEventReader>,
  now: number,
): boolean {
  let changed = false;
  const batch: RunEvent[] = [];
  const closing: EventDraft[] = [];
  for (const t of tasks) {
    if (t.done) continue;
    const listed = states.get(t.name);
    t.unlisted = listed ? 0 : t.unlisted + 1;
    const state = listed ?? t.state;
    t.state = state;
    if (state && (STARTED.test(state.state) || isFinalState(state.state))) t.startedSeenMs ??= now;
    if (t.marker === null && t.startedSeenMs !== null) t.marker = readStartMarker(input.runDir, t.name);
    if (state) {
      const said = JSON.stringify([state.state, state.reason, state.node, t.marker?.gpus ?? null]);
      if (said !== t.said) {
        t.said = said;
        changed = true;
        // Stamped now and sorted in with the tasks' own events of this poll.
        batch.push(
          stampEvent(input.run, {
            event: "slurm.task",
            pipeline: t.pipeline.name,
            step: null,
            device: null,
            job: t.name,
            state: state.state,
            reason: state.reason,
            node: state.node ?? t.marker?.node ?? null,
            gpus: t.marker?.gpus ?? null,
            exitCode: state.exitCode,
          }),
        );
      }
    }
    // Requeued (--requeue, its node failed): Slurm runs the task again, which records on in the same
    // files; what the killed run said stands as it said it (its interrupted step counts for nothing).
    if (input.requeue && t.eventsEnded && state?.state === "PENDING") {
      append(batch, t.held ?? []);
      t.held = null;
      t.eventsEnded = false;
      t.finalSeenMs = null;
    }
    const read = reader.read(t.name, t.pipeline);
    const { ended } = read;
    // A requeued run skips the steps its killed run finished ("completed"): they were counted once.
    const events = read.events.filter(
      (e) => !(e.event === "gpu.step.skip" && e.cause === "completed" && t.endedOk.has(e.step)),
    );
    if (events.length > 0) changed = true;
    for (const e of events) track(t, e);
    // Steps the task's gpuplan saw interrupted were stopped by Slurm (scancel, time limit,
    // preemption), not by this run: hold them until Slurm says which, and say that.
    if (t.held === null && events.some(isInterruptedEnd)) t.held = [];
    if (t.held) append(t.held, events);
    else append(batch, events);
    if (ended) t.eventsEnded = true;
    const final =
      state !== null && isFinalState(state.state) && !(input.requeue && state.state === "NODE_FAIL");
    if (t.eventsEnded) {
      // gpuplan's account is complete; wait for Slurm's word on the task (or for squeue to forget it).
      if (final || t.unlisted >= FORGOTTEN_POLLS) {
        t.done = true;
        if (t.held && state) {
          append(
            batch,
            t.held.map((e) => (isInterruptedEnd(e) ? asSlurmEnding(e, state) : e)),
          );
          // The steps it never reached are skipped, as after a failed step.
          closing.push(
            ...closeOutPipeline(
              t.pipeline,
              t.progress,
              { ...state, name: t.name },
              [],
              "",
              now,
              input.earlierAttempts,
            ),
          );
        }
      }
      continue;
    }
    if (!final) continue;
    t.finalSeenMs ??= now;
    // Its gpuplan wrote run.end before exiting unless Slurm killed it; give a shared folder a moment.
    if (state.state === "COMPLETED" || state.state === "FAILED") {
      if (now - t.finalSeenMs < EVENTS_GRACE_MS) continue;
    }
    const errLog = slurmLog(input.runDir, t);
    const drafts = closeOutPipeline(
      t.pipeline,
      t.progress,
      { ...state, name: t.name },
      tail(input.runDir, errLog),
      errLog,
      now,
      input.earlierAttempts,
    );
    append(closing, drafts);
    t.done = true;
    changed = true;
  }
  batch.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
  for (const e of batch) input.emit(e);
  for (const d of closing) input.emit(d);
  return changed;
}

const isInterruptedEnd = (e: RunEvent): boolean => e.event === "gpu.step.end" && e.status === "interrupted";

/** A step the task saw interrupted, as Slurm ended the task: cancelled, timed out, preempted… */
function asSlurmEnding(e: RunEvent, state: TaskState): RunEvent {
  if (e.event !== "gpu.step.end" || state.state === "COMPLETED") return e;
  const { status, hint } = slurmEnding(state);
  return { ...e, status, hint };
}

/** What the merged events tell of a pipeline's steps: running, or settled (ended for good, skipped). */
function track(t: Tracked, e: RunEvent): void {
  if (e.step === null) return;
  if (e.event === "gpu.step.start")
    t.progress.set(e.step, {
      phase: "running",
      device: e.device,
      attempt: e.attempt,
      startedMs: Date.parse(e.ts),
    });
  else if (e.event === "gpu.step.end" || e.event === "gpu.step.skip")
    t.progress.set(e.step, { phase: "settled" });
  if (e.event === "gpu.step.end" && e.status === "ok") t.endedOk.add(e.step);
}

/** Slurm's stderr file of the task, as the script names it (`logs/JOBNAME-JOB_TASK.err`); "" when there is none. */
function slurmLog(runDir: string, t: Tracked): string {
  const dir = join(slurmDir(runDir), "logs");
  const suffix = `-${t.name}.err`;
  try {
    const file = readdirSync(dir).find((f) => f.endsWith(suffix));
    return file ? join(dir, file) : "";
  } catch {
    return "";
  }
}

/**
 * How much of a task's .err is read for its last lines: a task that printed gigabytes (a step's
 * output gone to Slurm's log, a loop of warnings) is never read whole for ten of them.
 */
const ERR_TAIL_BYTES = 64 * 1024;

/** The last lines of the task's .err (`path` in the run's slurm/logs/), escaped for display; none unless it is a regular file. */
function tail(runDir: string, path: string): string[] {
  if (!path) return [];
  const read = readTaskFile(runDir, join("logs", basename(path)), { maxBytes: ERR_TAIL_BYTES, tail: true });
  if (!("bytes" in read)) return [];
  const lines = read.bytes.toString("utf8").split("\n");
  // Read from inside the file: its first line is the end of one cut short.
  if (read.start > 0) lines.shift();
  return lines
    .filter((l) => l.trim() !== "")
    .slice(-10)
    .map((l) => displayText(l, 400));
}

/** After scancel, the tasks' gpuplan runs get SIGTERM and record their interrupted steps: wait a little for that. */
async function drainAfterCancel(
  input: FollowInput,
  tasks: Tracked[],
  reader: ReturnType<typeof createTaskEventReader>,
): Promise<void> {
  const end = performance.now() + 5000;
  for (;;) {
    const batch: RunEvent[] = [];
    for (const t of tasks) {
      if (t.done) continue;
      const { events, ended } = reader.read(t.name, t.pipeline);
      append(batch, events);
      if (ended) t.done = true;
    }
    batch.sort((a, b) => (a.ts < b.ts ? -1 : a.ts > b.ts ? 1 : 0));
    for (const e of batch) input.emit(e);
    const running = tasks.some((t) => !t.done && t.startedSeenMs !== null);
    if (!running || performance.now() > end) return;
    await sleep(250);
  }
}

/** squeue's answer for every job of the run (several calls for many jobs); the first failure, if any. */
async function squeue(slurm: RunCommand, jobs: readonly string[]): Promise<CommandOutput> {
  let stdout = "";
  for (const args of squeueCalls(jobs)) {
    const out = await slurm("squeue", args);
    if (out.status !== 0) return out;
    stdout += `${out.stdout}\n`;
  }
  return { status: 0, stdout, stderr: "" };
}

/** scancel the run's jobs; how it failed (its words escaped), or null when it did what was asked. */
export async function cancel(slurm: RunCommand, jobs: readonly string[]): Promise<string | null> {
  if (jobs.length === 0) return null;
  const out = await slurm("scancel", [...jobs]);
  return out.status === 0 ? null : describeFailure("scancel", out);
}

/** `squeue did not answer in 15 s`, `squeue failed (exit 1: …)`: Slurm's words escaped. */
function describeFailure(command: string, out: CommandOutput): string {
  if (out.failure === "timeout") return `${command} ${noAnswer(out)}`;
  if (out.failure === "not-found") return `${command} is not on PATH`;
  const said = out.stderr.trim().split("\n").at(-1) ?? "";
  const how = out.status !== null ? `exit ${out.status}` : (out.failure ?? "no exit status");
  return `${command} failed (${how}${said ? `: ${displayText(said, 200)}` : ""})`;
}

function squeueFailure(stderr: string, failure: string | undefined): VendorError {
  const message = stderr.trim().split("\n").slice(-3).join(" / ") || failure || "(no message)";
  return new VendorError(
    "squeue kept failing for 2 minutes while following the run",
    "slurm-command-failed",
    "squeue",
    displayText(message, 400),
    "the jobs go on in Slurm: gpuplan status RUN shows them, gpuplan run --resume RUN --executor slurm follows what is left",
  );
}

function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const timer = setTimeout(done, ms);
    function done() {
      clearTimeout(timer);
      signal?.removeEventListener("abort", done);
      resolve();
    }
    signal?.addEventListener("abort", done, { once: true });
  });
}
