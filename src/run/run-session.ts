/**
 * A run session: a prepared run carried out for the CLI — its directory and journal, its events
 * files, the slot lock, the view, the interrupt signals, and the executor in the middle of them;
 * everything set up before the first step and let go of after the last, whatever happens between.
 * Heavy modules (koffi's lock, the executor) are imported only here, when needed; the view comes
 * from the CLI (src/run/run-view.ts), which decides how the run is shown.
 */
import { mkdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { releaseServing } from "../detect/prestarted.js";
import { fileError } from "../problems/file-errors.js";
import type { PlannedPipeline } from "../schema-types/plan.js";
import type { ExecuteResult } from "./executor/execute-options.js";
import { listenForInterrupts } from "./interrupt-signals.js";
import { noGpuLock } from "./lock/no-gpu-lock.js";
import type { SlotLock } from "./lock/types.js";
import type { PreparedRun } from "./prepare/prepare-run.js";
import { makeRunId } from "./prepare/run-id.js";
import { type EventFiles, openEventFiles } from "./record/event-files.js";
import {
  createOwnRunDir,
  type Journal,
  type JournalStart,
  openJournal,
  openJournalFile,
} from "./record/journal.js";
import { attemptLogFiles } from "./record/log-names.js";
import type { MemorySampler } from "./record/memory-snapshot.js";
import {
  isJournalDeleted,
  type RecordFailure,
  type RecordFailures,
  recordFailures,
} from "./record/record-failures.js";
import { type RunLock, takeRunLock } from "./record/run-lock.js";
import type { StreamSink } from "./record/stream-target.js";
import type { OpenRunView } from "./run-view.js";
import { bootIdEntry } from "./step/boot-id.js";
import type { SpawnMethod } from "./step/spawn/start-process.js";
import { isStepSessionAlive, liveSessions } from "./step/step-session.js";

export interface SessionOptions {
  /** The plan or pipeline file as given (the journal's header records it). */
  input: string;
  /** `--events FILE`: a copy of the events, appended. */
  eventsFile?: string;
  /** `--events` names a stream gpuplan already has and cannot open anew (a socket as stdout): written through this. */
  eventsSink?: StreamSink;
  /**
   * `--ui json`: the view's output, where the session writes the events itself, as the run's
   * events file holds them, with `--events`'s bounded backlog (the view adds its summary line).
   */
  viewEvents?: { sink: StreamSink; name: string };
  wait: boolean;
  lockTimeoutMs?: number;
  /** The view, as the CLI chose it (UI mode, colour level, where it writes). */
  openView: OpenRunView;
  /** SIGTERM → SIGKILL delay for interrupted steps. */
  killGraceMs: number;
  /** The GPU slot lock directory (--lock-dir, GPUPLAN_LOCK_DIR). */
  lockDir: string;
  /** Pin GPU steps to their GPU's local CPUs. */
  cpuPinning: boolean;
  /** How steps are started. */
  spawn: SpawnMethod;
  /** gpuplan's environment: where the memory sampler finds the vendor libraries (GPUPLAN_NVML_LIBRARY, …). */
  env: NodeJS.ProcessEnv;
  /**
   * A resumed run waits for a step an earlier gpuplan started and never saw end (killed with
   * `kill -9`) whose processes still run: its outcome is unknown, so it runs again, but never
   * beside itself. Called once per such step, before waiting.
   */
  onWaitForEarlierAttempt?: (attempt: JournalStart) => void;
  /** A record file's first write failure (a full disk), as it happens: the run goes on. */
  onRecordFailure?: (failure: RecordFailure) => void;
  /**
   * The steps are done and the journal closed, and the `--events` FIFO's or device's reader has
   * kept the end waiting a second: its path and the bytes it has yet to take. Said once.
   */
  onWaitForEventsReader?: (path: string, pendingBytes: number) => void;
  /** Why this run's warm workers cannot be recorded for `gpuplan locks` (escaped), said once: the run goes on. */
  onWarmInfoUnwritten?: (why: string) => void;
}

export interface SessionResult extends ExecuteResult {
  /** The run's id and folder: a new run's differ from the prepared ones where another run had drawn those. */
  runId: string;
  runDir: string;
  /** Record files that lost something (events, journal entries that never reached the disk). */
  recordsIncomplete: RecordFailure[];
  /** The signal that interrupted the run, if one did (SIGTERM ends it with 143, SIGINT with 130). */
  interruptedBy: NodeJS.Signals | null;
  /**
   * The view's last words were still waiting for stderr's reader when a signal stopped the wait:
   * the process ends without them (Node's stream would keep it alive until the reader reads).
   */
  viewAbandoned: boolean;
}

export async function runSession(prepared: PreparedRun, options: SessionOptions): Promise<SessionResult> {
  const { createMemorySampler } = await import("./record/memory-snapshot.js");
  // One sampler child for the whole run (memory snapshots, per-process VRAM, what others hold),
  // let go of at its end. Asked for a first reading at once: its child (a Node start and the
  // vendor libraries, ~80 ms) comes up while the run folder, journal and view are set up and the
  // first steps start; until its answer, admission and snapshots use verification's reading.
  // Its child is the one the check against the machine left serving, where there is one.
  const memory = needsGpuLock(prepared.pipelines)
    ? (await import("../detect/memory-readings.js")).openGpuMemoryReader(options.env)
    : null;
  // A checked child no sampler took (a plan whose selected pipelines need no GPU) is let go now.
  releaseServing();
  const labels = new Map(prepared.plan.registry.map((g) => [g.uuid, g.gpu]));
  // The first readings come from verification's, while fresh (prepare-run.ts gpuReading).
  const sampler = createMemorySampler(memory, labels, prepared.gpuReading);
  if (memory) sampler.prefetch();
  try {
    return await runPrepared(prepared, options, sampler);
  } finally {
    memory?.close();
  }
}

async function runPrepared(
  prepared: PreparedRun,
  options: SessionOptions,
  sampler: MemorySampler,
): Promise<SessionResult> {
  const { plan, pipelines, baseDir, slurmTask } = prepared;
  // A Slurm task records into its run's folder, which the submitting gpuplan made and owns.
  // Before anything is written: an untrusted or broken lock directory (or GPU lock file) is the
  // user's to fix, and steps run before it was found, then a run folder left unfinished, would not be.
  const needsLock = needsGpuLock(pipelines);
  const lock = await openLock(needsLock, options.lockDir, [
    ...new Set(prepared.bindings.map((b) => b.live.uuid)),
  ]);
  const task = slurmTask !== undefined ? await openTaskRecord(prepared.runDir, slurmTask) : null;
  // A new run's id is its folder's name, drawn again where another run started in the same second has it.
  const { runId, runDir, planSha256 } =
    !prepared.resumed && !task
      ? await createOwnRunDir(prepared.runId, prepared.runDir, plan, prepared.planText, makeRunId)
      : { runId: prepared.runId, runDir: prepared.runDir, planSha256: undefined };
  const failures = recordFailures(options.onRecordFailure);
  const eventPaths = [
    task?.events ?? join(runDir, "events.jsonl"),
    ...(options.eventsFile ? [options.eventsFile] : []),
  ];
  const { runLock, journal, events } = await openRunRecords(runDir, runId, prepared, task, failures, () =>
    openEventFiles(eventPaths, failures, {
      ...(options.eventsFile &&
        options.eventsSink && { sinks: new Map([[options.eventsFile, options.eventsSink]]) }),
      ...(options.viewEvents && { view: options.viewEvents.sink, viewName: options.viewEvents.name }),
    }),
  );
  if (!prepared.resumed) {
    await journal.append({
      type: "run",
      run: runId,
      startedAt: new Date().toISOString(),
      input: options.input,
      baseDir,
      pipelines: pipelines.map((p) => p.name),
      // What --resume checks plan.json against (a Slurm task's journal has its run's).
      ...(planSha256 !== undefined && { planSha256 }),
      ...bootIdEntry(),
    });
  }
  // Before the view takes the terminal: what the run waits for is said on stderr as it is.
  const signals = listenForInterrupts();
  await waitForEarlierAttempts(
    prepared.mayStillRun,
    runId,
    runDir,
    signals.interrupt,
    options.onWaitForEarlierAttempt,
  );
  const view = await options.openView({
    plan,
    pipelines: pipelines.map((p) => p.name),
    ...(options.viewEvents && { eventLines: { append: (text: string) => events.writeToView(text) } }),
  });
  let done: ExecuteResult;
  let viewAbandoned = false;
  const { executeRun } = await import("./executor/execute-run.js");
  const { createWarmInfoWriter } = await import("./warm/worker-info.js");
  // Beside the slot files (or in their warm/ folder), for `gpuplan locks`; a CPU run's lock has no directory.
  const writeWarmInfo = needsLock
    ? createWarmInfoWriter(lock.dir, runId, options.onWarmInfoUnwritten ?? (() => {}))
    : null;
  try {
    const result = await executeRun({
      plan,
      pipelines,
      run: runId,
      runDir,
      baseDir,
      lock,
      journal,
      completed: prepared.completed,
      earlierAttempts: prepared.attempts,
      wait: options.wait,
      ...(options.lockTimeoutMs !== undefined && { lockTimeoutMs: options.lockTimeoutMs }),
      signal: signals.interrupt,
      interruptSignal: signals.received,
      killNow: signals.killNow,
      killGraceMs: options.killGraceMs,
      cpuPinning: options.cpuPinning,
      spawn: options.spawn,
      sampler,
      bindings: prepared.bindings.map((b) => ({
        gpu: b.planGpu,
        uuid: b.live.uuid,
        pciBusId: b.live.pciBusId,
        liveGpu: b.live.id,
        planUuid: b.planUuid,
        replaced: b.replaced,
      })),
      emit: (event) => {
        events.write(event);
        view.onEvent(event);
      },
      onOutput: (pipeline, step, stream, line) => view.onOutput(pipeline, step, stream, line),
      ...(writeWarmInfo && { onWarmWorkers: writeWarmInfo }),
      // Said as the run's other records are (run-session's failures): once per file, and exit 2.
      onLogLost: (path, e) => failures.lost(path, e),
    }).catch(async (e: unknown) => {
      // Let go of the terminal (the live view) before the error (or our bug's stack) is printed.
      await view.close(null).catch(() => undefined);
      throw e;
    });
    // The journal's end was written (and its link count asked) by now: a deleted one is known.
    // The summary waits for stderr's reader as any writer's does, but a signal still ends gpuplan:
    // Node's stream would hold the process, unkillable but by SIGKILL, until a stalled reader read.
    viewAbandoned = !(await settledUnlessStopped(
      view.close(result.summary, { resumable: !isJournalDeleted(failures.incomplete()) }),
      signals.interrupt,
    ));
    done = result;
  } finally {
    // The run folder is complete and let go of before a slow --events reader is waited for; a
    // signal meanwhile stops that wait (and ends the run as the signal does).
    events.closeFiles();
    await journal.close();
    await runLock?.release();
    try {
      await events.close({
        stop: signals.interrupt,
        ...(options.onWaitForEventsReader && { onWait: options.onWaitForEventsReader }),
      });
    } finally {
      signals.dispose();
    }
  }
  return {
    ...done,
    runId,
    runDir,
    recordsIncomplete: failures.incomplete(),
    interruptedBy: signals.interrupt.aborted ? signals.received() : null,
    viewAbandoned,
  };
}

/** How long the view's last words wait for their reader once the run is interrupted (as --events' get). */
const VIEW_GRACE_MS = 1000;

/**
 * Whether `closing` settled (its failure thrown) before `stop` had been aborted for VIEW_GRACE_MS:
 * an interrupted run gives a slow reader a second, one that ended by itself waits until a signal.
 */
async function settledUnlessStopped(closing: Promise<void>, stop: AbortSignal): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  const stopped = new Promise<false>((resolve) => {
    onAbort = () => {
      timer = setTimeout(() => resolve(false), VIEW_GRACE_MS);
    };
    if (stop.aborted) onAbort();
    else stop.addEventListener("abort", onAbort, { once: true });
  });
  try {
    return await Promise.race([closing.then(() => true as const), stopped]);
  } finally {
    clearTimeout(timer);
    if (onAbort) stop.removeEventListener("abort", onAbort);
  }
}

/**
 * The run folder's lock, journal and event files (`openEvents`, given the events' paths, the run's
 * own first). Held until the run ends, the lock refuses a `--resume` of this run meanwhile, naming
 * this process; the tasks of a Slurm run share its folder and each writes only its own files: no
 * lock. Where one cannot be opened (out of descriptors, a full disk), what was opened is closed and
 * a new run's folder goes, as createRunDir's does when plan.json cannot be written: nothing ran in
 * it, and a folder without its journal would be listed as damaged and refused by --resume.
 */
async function openRunRecords(
  runDir: string,
  runId: string,
  prepared: PreparedRun,
  task: { journal: string; events: string } | null,
  failures: RecordFailures,
  openEvents: () => EventFiles,
): Promise<{ runLock: RunLock | null; journal: Journal; events: EventFiles }> {
  let runLock: RunLock | null = null;
  try {
    runLock = task ? null : (prepared.runLock ?? (await takeRunLock(runDir, runId)));
    const path = task?.journal ?? join(runDir, "journal.jsonl");
    const journal = await (task ? openJournalFile(path, failures) : openJournal(runDir, failures)).catch(
      (e: unknown) => {
        throw fileError(e, path, "write", "the run's journal");
      },
    );
    try {
      return { runLock, journal, events: openEvents() };
    } catch (e) {
      await journal.close().catch(() => undefined);
      // Node's own error (EMFILE, ENOSPC) names the file it could not open; ours are said already.
      if (!(e instanceof Error) || !("syscall" in e)) throw e;
      const own = task?.events ?? join(runDir, "events.jsonl");
      const failed = "path" in e && typeof e.path === "string" ? e.path : own;
      throw fileError(e, failed, "write", failed === own ? "the run's events" : "the events file");
    }
  } catch (e) {
    if (!prepared.resumed && !task) {
      await runLock?.release().catch(() => undefined);
      await rm(runDir, { recursive: true, force: true }).catch(() => undefined);
    }
    throw e;
  }
}

/** Where a Slurm task's own journal and events go in its run's folder (src/slurm/follow/run-record.ts). */
async function openTaskRecord(runDir: string, task: string): Promise<{ journal: string; events: string }> {
  const { makeSlurmFolders, taskEventsPath, taskJournalPath } = await import("../slurm/follow/run-record.js");
  // An exported script's folder or one a user tidied may lack them; the task's records go there.
  await makeSlurmFolders(runDir, ["", "journals", "events"]);
  await mkdir(join(runDir, "logs"), { recursive: true });
  return { journal: taskJournalPath(runDir, task), events: taskEventsPath(runDir, task) };
}

/** How often a still-running earlier attempt is looked at. */
const EARLIER_ATTEMPT_POLL_MS = 100;

/**
 * Wait until nothing of an earlier attempt is alive — its process group, or any process of its
 * session (step-session.ts) — or until the run is interrupted meanwhile. One pass over /proc tells
 * which of them still run; only those are looked at again.
 */
async function waitForEarlierAttempts(
  attempts: readonly JournalStart[],
  run: string,
  runDir: string,
  stop: AbortSignal,
  onWait: ((attempt: JournalStart) => void) | undefined,
): Promise<void> {
  if (attempts.length === 0) return;
  const sessions = liveSessions();
  for (const attempt of attempts) {
    const step = {
      ...attempt,
      run,
      logs: attemptLogFiles(runDir, attempt.pipeline, attempt.step, attempt.attempt),
    };
    if (!isStepSessionAlive(step, sessions)) continue;
    onWait?.(attempt);
    while (!stop.aborted && isStepSessionAlive(step))
      await new Promise((r) => setTimeout(r, EARLIER_ATTEMPT_POLL_MS));
  }
}

/** A pipeline that uses a GPU needs the cross-process lock; a CPU-only run does not. */
function needsGpuLock(pipelines: readonly PlannedPipeline[]): boolean {
  return pipelines.some((p) => p.gpus.length > 0 || p.steps.some((s) => s.uuid !== null));
}

/** A CPU-only run has nothing to lock across processes: no lock directory, and a lock that refuses any use. */
async function openLock(needsLock: boolean, dir: string, uuids: readonly string[]): Promise<SlotLock> {
  return needsLock ? (await import("./lock/open-slot-lock.js")).openSlotLock(dir, uuids) : noGpuLock();
}
