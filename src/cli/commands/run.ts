/**
 * `gpuplan run PLAN|PIPELINE`: parse the options, prepare the run (src/run/prepare/prepare-run.ts), carry
 * it out (src/run/run-session.ts), print what went wrong and choose the exit code — the
 * only part of the run that prints or decides how it ends.
 */
import type { Stats } from "node:fs";
import { dirname, join } from "node:path";
import type { DetectInventory } from "../../inventory/types.js";
import type { Code } from "../../problems/codes.js";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { fileError } from "../../problems/file-errors.js";
import type { Problem } from "../../problems/problem.js";
import type { PreparedRun } from "../../run/prepare/prepare-run.js";
import {
  DELETED_WHILE_RUNNING,
  isJournalDeleted,
  type RecordFailure,
} from "../../run/record/record-failures.js";
import type { StreamSink } from "../../run/record/stream-target.js";
import type { SessionResult } from "../../run/run-session.js";
import type { RunView, RunViewContext } from "../../run/run-view.js";
import type { SourceFile } from "../../source/source-file.js";
import { jsonText } from "../../text/json-text.js";
import { escapeText } from "../../text/safe-text.js";
import { formatHuman } from "../../ui/problems/human.js";
import { formatSize } from "../../units/size.js";
import { writeErr, writeOut } from "../output.js";
import { sinkOf, stderr, stdout } from "../output-guard.js";
import { colorLevelOf, paintFor } from "../paint.js";
import { checkRunFlagScope } from "../run-flag-scope.js";
import { refuseEventsInRunFolder, refuseRunRecord } from "../run-records.js";
import type { SlurmRunOptions } from "./run-slurm.js";

/** The options as program.ts resolved them (flag, GPUPLAN_* variable, default); durations in ms. */
export interface RunOptions extends SlurmRunOptions {
  /** Not given: local, or slurm when resuming a run that was submitted to Slurm. */
  executor?: "local" | "slurm";
  bindSlurmGpus?: boolean;
  slurmTask?: string;
  pipeline: string[];
  events?: string;
  wait: boolean;
  lockTimeout?: number;
  resume?: string;
  ui: "auto" | "tui" | "plain" | "json";
  dryRun?: boolean;
  lockDir: string;
  killGrace: number;
  cpuPinning: "on" | "off";
  spawn: "auto" | "node";
  bind: "auto" | "exact";
  /** The long flags given on the command line, in order (not those from defaults or GPUPLAN_* variables). */
  flagsGiven?: readonly string[];
}

/** `file` may be left out with `--resume`: the run folder keeps the plan it started with. */
export default async function run(file: string | undefined, given: RunOptions): Promise<number> {
  const options = { ...given, executor: given.executor ?? (await defaultExecutor(given.resume)) };
  checkRunFlagScope(options.executor, options.flagsGiven ?? []);
  // A path mistake in --events is found before anything starts, not after the run directory exists.
  if (options.events !== undefined && options.ui === "json") await refuseEventsOnJsonStdout(options.events);
  if (options.events !== undefined && options.resume !== undefined) {
    const { runDirOf } = await import("../../run/record/run-dir-of.js");
    refuseEventsInRunFolder(options.events, runDirOf(options.resume));
  }
  const eventsSink = options.events !== undefined ? await checkEventsFile(options.events, file) : undefined;
  const detect: DetectInventory = async (o) =>
    (await import("../../detect/index.js")).detectInventory({
      lockDir: options.lockDir,
      cudaOnlyIfNeeded: true,
      ...o,
    });

  const { prepareRun } = await import("../../run/prepare/prepare-run.js");
  const prepared = await prepareRun({
    ...(file !== undefined && { file }),
    pipelines: options.pipeline,
    ...(options.resume !== undefined && { resume: options.resume }),
    detect,
    // Submitting to Slurm: the GPUs are the nodes', not this machine's (each task checks its own).
    verify: options.executor !== "slurm",
    ...(options.slurmTask !== undefined && { slurmTask: options.slurmTask }),
    ...(options.bindSlurmGpus && {
      bindSlurmGpus: { allocated: process.env.SLURM_STEP_GPUS || process.env.SLURM_JOB_GPUS },
    }),
    bind: options.bind,
    busyGpus: () => busyGpus(options.lockDir),
  });
  if (!prepared.ok) {
    // A dry run's or a detached submission's JSON is one document: a program reading it gets the
    // problems that stopped it, not an empty stdout (run --json without them streams events).
    const [first, ...rest] = prepared.problems;
    if (options.ui === "json" && (options.dryRun || options.detach) && first) {
      const { formatErrorJson } = await import("../../ui/problems/error-json.js");
      writeOut(formatErrorJson(EXIT.problems, [first, ...rest]));
    }
    return reportProblems(prepared.problems, prepared.sources);
  }
  // Warnings of the in-memory compile (a GPU step that falls back to the CPU, say) go out as
  // `gpuplan compile` would print them, on stderr, before the run.
  if (prepared.warnings.length > 0)
    writeErr(formatHuman(prepared.warnings, prepared.sources, await paintFor()));
  const { plan, pipelines, baseDir, runId, runDir, bindings } = prepared.run;
  if (options.executor === "slurm") {
    const { runOnSlurmCommand } = await import("./run-slurm.js");
    // A resume's lock is held from the journal's reading until its new arrays are in
    // slurm/jobs.json, but for the squeue check (taken again after it, and the run refused where
    // another gpuplan changed it meanwhile): two resumes must never both submit what had not
    // completed. runOnSlurmCommand may hold a lock taken anew: prepared.run.runLock is that one.
    try {
      return await runOnSlurmCommand(file ?? join(runDir, "plan.json"), options, prepared.run, eventsSink);
    } finally {
      await prepared.run.runLock?.release();
    }
  }
  // A Slurm run resumed here: its tasks still in Slurm would run the same steps beside this run.
  if (prepared.run.resumed && !options.dryRun) await refuseWhileInSlurm(prepared.run);
  // Where each planned GPU runs, before anything starts (the dry run shows it in its own output).
  if (!options.dryRun && options.ui !== "json" && bindings.some((b) => b.replaced)) {
    const { formatBindings } = await import("../../ui/bindings-text.js");
    writeErr(formatBindings(bindings));
  }

  if (options.dryRun) {
    await prepared.run.runLock?.release();
    const { describeDryRun } = await import("../../run/prepare/dry-run.js");
    const description = describeDryRun(plan, pipelines, baseDir, runId, process.env.PATH, bindings);
    const { formatDryRun } = await import("../../ui/dry-run-text.js");
    writeOut(
      options.ui === "json" ? `${jsonText(description, 2)}\n` : formatDryRun(description, plan.registry),
    );
    // A step that could not start (missing folder, program not on PATH) fails the dry run.
    const startable = description.pipelines.every((p) => p.steps.every((s) => s.problems.length === 0));
    return startable ? EXIT.ok : EXIT.problems;
  }

  const { runSession } = await import("../../run/run-session.js");
  const result = await runSession(prepared.run, {
    input: file ?? join(runDir, "plan.json"),
    ...(options.events && { eventsFile: options.events }),
    ...(eventsSink && { eventsSink }),
    // The JSON view's lines are the events file's: the session writes them, bounded (json-view.ts).
    ...(options.ui === "json" && { viewEvents: { sink: sinkOf("stdout"), name: "stdout" } }),
    wait: options.wait,
    ...(options.lockTimeout !== undefined && { lockTimeoutMs: options.lockTimeout }),
    openView: (context) => openView(context, options.ui),
    killGraceMs: options.killGrace,
    lockDir: options.lockDir,
    cpuPinning: options.cpuPinning === "on",
    spawn: options.spawn,
    env: process.env,
    onWaitForEarlierAttempt: (a) =>
      writeErr(
        `gpuplan: waiting for ${escapeText(a.pipeline)}/${escapeText(a.step)} (attempt ${a.attempt}, pid ${a.pid}), ` +
          "started before gpuplan was stopped and still running, to end; then it runs again\n",
      ),
    onWaitForEventsReader: sayWaitingForEventsReader,
    onWarmInfoUnwritten: (why) => writeErr(`gpuplan: ${why}\n`),
    onRecordFailure: warnRecordFailure,
  });
  const code = await endOfRun(result, plan.registry, options.events);
  // The summary a stalled reader of stderr never took keeps Node's stream, and the process, alive;
  // the run is recorded and a signal said not to wait: end with the run's status now.
  if (result.viewAbandoned) process.exit(code);
  return code;
}

/** Say how the run ended beyond its view (a busy GPU, lost records) and pick its exit status. */
async function endOfRun(
  result: SessionResult,
  registry: PreparedRun["plan"]["registry"],
  events: string | undefined,
): Promise<number> {
  if (result.busy) {
    const { busyGpuMessage } = await import("../../ui/busy-gpu-message.js");
    const { message, hint } = busyGpuMessage(result.busy, registry);
    const code: Code = "gpu-busy";
    writeErr(`gpuplan: error: ${message}  [${code}]\n  hint: ${hint}\n`);
    return EXIT.busy;
  }
  sayRecordsIncomplete(result.recordsIncomplete, events, result.runDir);
  // A signal while the end waited for a slow --events reader ends the run as it would have mid-run.
  if (result.summary.interrupted || result.interruptedBy !== null)
    return interruptedExit(result.interruptedBy);
  if (result.recordsIncomplete.length > 0) return EXIT.usage;
  return result.summary.failed > 0 ? EXIT.problems : EXIT.ok;
}

/** The steps are done and the --events reader has kept the end waiting a second. */
export function sayWaitingForEventsReader(path: string, bytes: number): void {
  writeErr(
    `gpuplan: the steps are done; waiting for the reader of ${escapeText(path)} to take the last ` +
      `${formatSize(bytes)} of events (Ctrl-C stops waiting; the run folder has every event)\n`,
  );
}

/** A record file's first write failure, as it happens (a full disk, an --events reader gone): the steps go on. */
export function warnRecordFailure({ file, reason }: RecordFailure): void {
  const code: Code = "records-incomplete";
  writeErr(
    `gpuplan: warning: cannot write ${escapeText(file)} (${escapeText(reason)}); the steps go on  [${code}]\n`,
  );
}

/** Reasons a write fails for want of room: the disk, a quota, a file size limit. */
const FULL = new Set(["ENOSPC", "EDQUOT", "EFBIG"]);

/** At the run's end: which record files lost what, and what still holds it (exit 2 follows). */
export function sayRecordsIncomplete(
  lost: readonly RecordFailure[],
  events: string | undefined,
  runDir: string,
): void {
  if (lost.length === 0) return;
  const code: Code = "records-incomplete";
  const files = lost.map((f) => `${escapeText(f.file)} (${escapeText(f.reason)})`).join(", ");
  // --events loses what its reader left behind (EPIPE) or a disk refused; the run folder keeps its own copy.
  const own = lost.filter((f) => f.file !== events);
  // A journal deleted with its run folder: nothing is left for --resume to go on.
  const journalGone = isJournalDeleted(own);
  const hints = [
    ...(own.some((f) => FULL.has(f.reason)) ? ["free some space (df -h)"] : []),
    // A directory or a link in a log's place (EISDIR, ELOOP), a folder made read-only: space is not it.
    ...(own.some((f) => !FULL.has(f.reason) && f.reason !== DELETED_WHILE_RUNNING)
      ? ["check those files and their folder (ls -l)"]
      : []),
    ...(journalGone
      ? ["the run's journal was deleted, so --resume cannot continue it: run the plan again"]
      : own.some((f) => f.reason === DELETED_WHILE_RUNNING)
        ? ["what was written to a deleted file is gone"]
        : []),
    ...(lost.some((f) => f.file === events)
      ? [`the run folder ${escapeText(runDir)} keeps its own copy of the events`]
      : []),
  ];
  writeErr(
    `gpuplan: error: the run's records are incomplete: ${files} lost what could not be written  [${code}]\n` +
      `  hint: ${hints.join("; ")}${journalGone ? "" : "; steps recorded in the journal are not run again by --resume"}\n`,
  );
}

/**
 * The run's view in the mode asked for (`auto`: the live view on an interactive terminal outside
 * CI), painted at the colour level decided for stderr. Guarded streams: a viewer that goes away
 * (EPIPE) ends the view's output, never the run.
 */
export async function openView(context: RunViewContext, ui: RunOptions["ui"]): Promise<RunView> {
  const { createView, resolveUiMode } = await import("../../ui/run/index.js");
  const err = stderr();
  const mode = resolveUiMode(ui, { isTTY: Boolean(err.isTTY), columns: err.columns });
  return createView(mode, { ...context, out: stdout(), err, colorLevel: colorLevelOf("stderr") });
}

/**
 * `--ui json` writes the events to stdout already; `--events /dev/stdout` beside it wrote each one
 * twice, and the two writers (each reading back from events.jsonl past its memory bound) could
 * interleave parts of lines.
 */
async function refuseEventsOnJsonStdout(path: string): Promise<void> {
  const { descriptorOf } = await import("../../plan/write-atomic.js");
  if (descriptorOf(path) === 1)
    throw new UsageError(
      `--events ${path} with --ui json: the json view writes the events to stdout already`,
      "conflicting-options",
      "leave out --events, or send the events elsewhere (--events events.jsonl)",
    );
}

/**
 * `--events FILE` is appended to (several runs may share one), with its folder made when missing;
 * open it once now so that a directory, a file where a folder is needed or a read-only folder is a
 * usage error before the run starts. A descriptor gpuplan already has (`/dev/stdout`, `/dev/fd/N`)
 * that open() cannot reach — a socket, as stdout is under systemd or a Node parent's pipes — is
 * written through as it is: the sink returned. A UNIX socket by its path is refused.
 */
async function checkEventsFile(path: string, input: string | undefined): Promise<StreamSink | undefined> {
  // Loaded here, as only --events needs it; not by import(), which would cost this command's
  // bundle chunk its code cache (scripts/bundle.mjs).
  const { open, stat } = process.getBuiltinModule("node:fs/promises");
  const [events, plan] = await Promise.all([
    stat(path).catch(() => null),
    input && stat(input).catch(() => null),
  ]);
  // Appending events to the plan or pipeline file being run would destroy it (the next run cannot read it).
  if (events && plan && events.isFile() && events.dev === plan.dev && events.ino === plan.ino)
    throw new UsageError(
      `--events ${path} is ${input}, the file this run reads: appending events there would destroy it`,
      "conflicting-options",
      "write the events to their own file, e.g. --events events.jsonl",
    );
  const { descriptorOf, isEventLoopDescriptor } = await import("../../plan/write-atomic.js");
  const fd = descriptorOf(path);
  if (fd !== null) {
    const sink = await descriptorSink(fd, events, isEventLoopDescriptor);
    if (sink) return sink;
  } else if (events?.isSocket())
    // open() of a socket fails (ENXIO); connecting is a protocol of its own (journald's needs a header).
    throw new UsageError(
      `cannot write events file ${path}: it is a UNIX socket, which gpuplan does not connect to`,
      "unwritable-file",
      "give a FIFO (mkfifo) or a file, or connect the socket to gpuplan's stdout and give --events /dev/stdout",
    );
  refuseRunRecord(path, "--events");
  try {
    const existing = events;
    if (existing?.isDirectory()) throw Object.assign(new Error("is a directory"), { code: "EISDIR" });
    // A FIFO or a device is written to as a stream; opening it here would block or end its reader.
    if (existing && !existing.isFile()) return undefined;
    // Not mkdir's recursive option: it spins forever under /proc (make-folders.ts).
    const { makeFoldersSync } = await import("../../run/record/make-folders.js");
    makeFoldersSync(dirname(path));
    await (await open(path, "a")).close();
    return undefined;
  } catch (e) {
    throw fileError(e, path, "write", "events file");
  }
}

/**
 * `--events` naming descriptor `fd` of gpuplan's own: stdout and stderr (not files) go through
 * gpuplan's own stream, one writer keeping lines whole and in order with what else is printed
 * there; another descriptor that is a socket gets a stream of its own. Anything else (a file, a
 * pipe, a device) is opened by its path as before: undefined.
 */
async function descriptorSink(
  fd: number,
  stats: Stats | null,
  isEventLoopDescriptor: (fd: number) => boolean,
): Promise<StreamSink | undefined> {
  // Writing events into the event loop's own wakeup pipe (--events /dev/fd/7) crashed gpuplan (SIGSEGV).
  if (stats === null || (fd > 2 && isEventLoopDescriptor(fd)))
    throw new UsageError(
      `cannot write events file /dev/fd/${fd}: gpuplan was started without descriptor ${fd} open`,
      "unwritable-file",
      "open it for gpuplan (e.g. 3>&1), or name a file",
    );
  if (stats.isFile()) return undefined;
  if (fd === 1 || fd === 2) return sinkOf(fd === 1 ? "stdout" : "stderr");
  if (!stats.isSocket()) return undefined;
  const { Socket } = process.getBuiltinModule("node:net");
  const socket = new Socket({ fd, readable: false, writable: true });
  // Errors reach each write's callback (the stream target reports them); unref: it never holds the exit.
  socket.on("error", () => undefined).unref();
  return { write: (bytes, done) => socket.write(bytes, (e) => done(e ?? null)) };
}

/**
 * `--resume RUN --executor local` of a run submitted to Slurm is refused while tasks of it are
 * still queued or running, or squeue cannot say (slurm-run-active, slurm-command-failed). Where
 * Slurm's commands are not installed at all (the run folder copied to a workstation), it cannot
 * be asked: a warning, and the resume goes on.
 */
async function refuseWhileInSlurm(prepared: PreparedRun): Promise<void> {
  const { isSlurmRun } = await import("../../run/prepare/resume-run.js");
  const { refuseWhileActive } = await import("./run-slurm.js");
  const { QUESTION_TIMEOUT_MS, slurmCommandRunner } = await import("../../slurm/run-slurm-command.js");
  try {
    // Inside: a damaged slurm/ (isSlurmRun throws it) lets the run lock go too.
    if (!isSlurmRun(prepared.runDir)) return;
    await refuseWhileActive(prepared, slurmCommandRunner(process.env, QUESTION_TIMEOUT_MS));
  } catch (e) {
    if (e instanceof UsageError && e.code === "slurm-not-found") {
      const code: Code = "slurm-not-found";
      writeErr(
        `gpuplan: warning: run ${escapeText(prepared.runId)} was submitted to Slurm, and squeue is not on PATH here to say whether tasks of it still run; resuming here  [${code}]\n`,
      );
      return;
    }
    await prepared.runLock?.release();
    throw e;
  }
}

/** Where a run goes without --executor: where it went before, when it is resumed. */
async function defaultExecutor(resume: string | undefined): Promise<"local" | "slurm"> {
  if (resume === undefined) return "local";
  const { isSlurmRun } = await import("../../run/prepare/resume-run.js");
  return isSlurmRun(resume) ? "slurm" : "local";
}

/** GPUs every slot of which another run holds: a replacement GPU is looked for elsewhere first. */
async function busyGpus(lockDir: string): Promise<ReadonlySet<string>> {
  const { createSlotLock } = await import("../../run/lock/index.js");
  const slots = await createSlotLock({ dir: lockDir }).inspect();
  const free = new Set(slots.filter((s) => !s.held).map((s) => s.uuid));
  return new Set(slots.filter((s) => s.held && !free.has(s.uuid)).map((s) => s.uuid));
}

async function reportProblems(problems: Problem[], sources: SourceFile[]): Promise<number> {
  writeErr(formatHuman(problems, sources, await paintFor(), { seeAll: "--dry-run --json" }));
  return EXIT.problems;
}

/** An interrupted run ends as a shell reports a process the signal ended: 128 + its number. */
function interruptedExit(signal: NodeJS.Signals | null): number {
  if (signal === "SIGTERM") return EXIT.terminated;
  if (signal === "SIGHUP") return EXIT.hangup;
  if (signal === "SIGQUIT") return EXIT.quit;
  return EXIT.interrupted;
}
