/**
 * Reading what a run left in its folder (`.gpuplan/runs/<id>/`) for a report: the plan it ran,
 * the journal's header, every line of events.jsonl that is a run event (checked against
 * schemas/run-events.schema.json; what is not is counted and said, never trusted), and the last
 * lines of each attempt's stderr. Nothing here is trusted for display: the renderers escape it.
 * A folder that is damaged (a missing plan, a torn line, a FIFO where a file should be) still
 * gives a report of what could be read, with notes saying what could not. Files are read only
 * when they are regular files inside the folder, never through a link (open-in-folder.ts).
 */
import { lstat, readdir, stat } from "node:fs/promises";
import { basename, dirname, join, relative, resolve, sep } from "node:path";
import { checkPlan, parsePlanText } from "../plan/read-plan.js";
import { UsageError } from "../problems/errors.js";
import { errnoOf, fileError } from "../problems/file-errors.js";
import { hasRealTime } from "../run/record/event-time.js";
import type { RunEvent } from "../run/record/events.js";
import { RUNS_DIR } from "../run/record/journal.js";
import { runDirOf } from "../run/record/run-dir-of.js";
import { type RunHeader, runHeaderOf } from "../run/record/run-header-line.js";
import { checkWorkingFolder } from "../run/record/working-folder.js";
import { runIdsNewestFirst } from "../runs/run-order.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import { slurmFolderDamage, slurmRecordFile } from "../slurm/follow/slurm-folder.js";
import { MAX_SOURCE_BYTES } from "../source/read-source-text.js";
import { attemptKey } from "./attempts.js";
import { openInFolder, realFolder } from "./open-in-folder.js";
import { readLines } from "./read-lines.js";
import { RepeatedEvents } from "./repeated-events.js";

export interface RunFolder {
  runDir: string;
  /** The run's id: its folder's name (what the user asked for), not what its journal says. */
  id: string;
  header: RunHeader | null;
  plan: GpuplanPlan | null;
  events: RunEvent[];
  /** The last stderr lines of each attempt, by attemptKey. */
  stderrTails: Map<string, string[]>;
  notes: string[];
  /**
   * The first line that is not a run event (1-based), of each events file that has one, by its
   * name in the run folder: events.jsonl, a Slurm task's slurm/events/JOB_TASK.jsonl.
   */
  firstBadLines: Map<string, number>;
  /** When the events were read (epoch ms): no event can have happened later. */
  readAtMs?: number;
}

/** Bigger files are refused rather than read into memory (a run of 100,000 steps writes ~200 MB). */
const MAX_EVENTS_BYTES = 1024 * 1024 * 1024;
/** Lines of an ok attempt's stderr a report carries (a failed one's come with its event). */
const OK_TAIL_LINES = 2;
const FAILED_TAIL_LINES = 10;
const MAX_LINE_CHARS = 300;
/** How much of a log's end is read for its last lines. */
const TAIL_BYTES = 4096;
/** Beyond this many bytes of ok attempts' tails a report carries none (a 5,000-step run stays small). */
const OK_TAILS_BUDGET = 600_000;

/**
 * The run folder `run` names (an id in the runs folder, or a path: run-dir-of.ts), or the newest
 * run when none is named.
 */
export async function findRunDir(run: string | undefined, runsDir = RUNS_DIR): Promise<string> {
  if (run === undefined) {
    // Ordered as gpuplan runs lists them: an exported array's slurm-JOB by when it started, not its name.
    const [latest] = await runIdsNewestFirst(runsDir);
    if (latest === undefined) {
      checkWorkingFolder();
      throw new UsageError(`no runs in ${runsDir}`, "unknown-run", "run one with gpuplan run PLAN");
    }
    return join(runsDir, latest);
  }
  const dir = runDirOf(run, runsDir);
  // Only a folder that is not there is no run: one gpuplan may not look into (EACCES) is said so.
  const info = await stat(dir).catch((e: unknown) => {
    const errno = errnoOf(e);
    if (errno === "ENOENT" || errno === "ENOTDIR") return null;
    throw fileError(e, dir, "read", "the run folder");
  });
  if (!info?.isDirectory()) {
    checkWorkingFolder();
    throw new UsageError(
      `no run ${run} (looked in ${dir})`,
      "unknown-run",
      `gpuplan runs lists the runs in ${runsDir}/`,
    );
  }
  return dir;
}

/** What every run folder has at least one of, from its first moment. */
const RUN_FILES = ["journal.jsonl", "plan.json", "events.jsonl"];

/**
 * Throws unless `dir` (found by findRunDir, `run` as named) is a run folder: one with none of a
 * run's files (`report /etc`, `report .`, the runs folder itself) is not a run, and a report of it
 * would be an empty page that looks like a run of 0 steps. A damaged run folder (a FIFO or a
 * directory where a file should be) is still one: its report says what could not be read.
 */
export async function checkRunFolder(dir: string, run: string, runsDir = RUNS_DIR): Promise<void> {
  for (const name of RUN_FILES) if (await lstat(join(dir, name)).catch(() => null)) return;
  const holdsRuns = (await runIdsNewestFirst(dir)).length > 0;
  throw new UsageError(
    `${run} is not a run folder: it has none of ${RUN_FILES.join(", ")}`,
    "unknown-run",
    holdsRuns
      ? `it holds runs: name one of them (gpuplan runs lists them), or leave the run out for the newest`
      : `name a run id or a run folder (${runsDir}/<id>); gpuplan runs lists the runs in ${runsDir}/`,
  );
}

export async function readRunFolder(runDir: string): Promise<RunFolder> {
  return readRunEvents(await readRunHead(runDir));
}

/** What a run is (its journal's header and its plan), without its events: small, whatever the run's size. */
export type RunHead = Pick<RunFolder, "runDir" | "id" | "header" | "plan" | "notes">;

export async function readRunHead(runDir: string): Promise<RunHead> {
  const notes: string[] = [];
  const header = await readHeader(runDir, notes);
  const plan = await readRunPlan(runDir, notes);
  // Resolved: `report .` from inside a run folder names the run, not ".".
  return { runDir, id: basename(resolve(runDir)), header, plan, notes };
}

/** The rest of the folder: its events (which may be hundreds of MB) and the failed steps' stderr tails. */
export async function readRunEvents(head: RunHead): Promise<RunFolder> {
  const notes = [...head.notes];
  const readAtMs = Date.now();
  const firstBadLines = new Map<string, number>();
  const eventsNotes: string[] = [];
  const { events, firstBadLine } = await readEvents(head.runDir, eventsNotes);
  if (firstBadLine !== null) firstBadLines.set("events.jsonl", firstBadLine);
  let all = events;
  // A Slurm run's steps are recorded by its tasks (their own files); events.jsonl is the follower's
  // merge of them, which an exported array's run and a detached one do not have.
  if (await lstat(slurmRecordFile(head.runDir)).catch(() => null)) {
    const { readTaskEventFiles } = await import("./task-event-files.js");
    const tasks = await readTaskEventFiles(
      head.header?.run ?? head.id,
      head.plan,
      events,
      (name, limit) => readInFolder(head.runDir, name, limit),
      MAX_EVENTS_BYTES,
    );
    for (const [name, line] of tasks.firstBadLines) firstBadLines.set(name, line);
    // Without a follower (an exported array's run) there is no events.jsonl: not a damage.
    notes.push(...eventsNotes.filter((n) => n !== "events.jsonl: missing"), ...tasks.notes);
    // In time order, as the follower merges them (a stable sort: events.jsonl's first at the same time).
    // A task's file that says an event twice (a line written again) counts it once, as events.jsonl does.
    const repeats = new RepeatedEvents();
    const taskEvents = tasks.events.filter((e) => !repeats.isRepeat(e));
    if (repeats.count > 0)
      notes.push(`slurm/events: ${repeats.count} line(s) repeat an event already read and were read once`);
    if (taskEvents.length > 0) all = [...events, ...taskEvents].sort((a, b) => cmp(a.ts, b.ts));
  } else {
    notes.push(...eventsNotes);
    // Its tasks' events are behind it (and their notes would read as a local run's ENOTDIR).
    const damage = slurmFolderDamage(head.runDir);
    if (damage !== null) notes.push(`slurm: ${damage}; its tasks' events (slurm/events/) were not read`);
  }
  const stderrTails = await readStderrTails(head.runDir, all, notes);
  return { ...head, events: all, stderrTails, notes, firstBadLines, readAtMs };
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** A regular file's text in the run folder, or why not ("missing", a link, a directory, a FIFO, too big). */
async function readInFolder(
  runDir: string,
  name: string,
  limit = MAX_SOURCE_BYTES,
): Promise<string | { refused: string }> {
  const opened = await openInFolder(await realFolder(runDir), join(runDir, name));
  if ("refused" in opened) return opened;
  const { handle, size } = opened;
  try {
    if (size > limit) return { refused: `${size} bytes, more than a report reads (${limit})` };
    return await handle.readFile("utf8");
  } catch (e) {
    return { refused: (e as NodeJS.ErrnoException).code ?? (e as Error).message };
  } finally {
    await handle.close().catch(() => undefined);
  }
}

/** A regular file's text in the run folder, or null with a note (missing, a link, a directory, a FIFO). */
async function readRegularFile(runDir: string, name: string, notes: string[], limit = MAX_SOURCE_BYTES) {
  const text = await readInFolder(runDir, name, limit);
  if (typeof text === "string") return text;
  notes.push(`${name}: ${text.refused}`);
  return null;
}

async function readHeader(runDir: string, notes: string[]): Promise<RunHeader | null> {
  const text = await readRegularFile(runDir, "journal.jsonl", notes);
  if (text === null) return null;
  const header = runHeaderOf(text.slice(0, text.indexOf("\n") >>> 0));
  if (!header) notes.push("journal.jsonl: its first line is not a run header");
  return header;
}

async function readRunPlan(runDir: string, notes: string[]): Promise<GpuplanPlan | null> {
  const planNotes: string[] = [];
  const text = await readRegularFile(runDir, "plan.json", planNotes);
  if (text === null) {
    notes.push(`${planNotes[0] ?? "plan.json: not read"}; estimates and GPUs are unknown`);
    return null;
  }
  try {
    const checked = await checkPlan(await parsePlanText(join(runDir, "plan.json"), text));
    if (checked.plan) return checked.plan;
    notes.push(`plan.json: ${checked.problems[0]?.message ?? "not a plan"}; estimates and GPUs are unknown`);
  } catch (e) {
    notes.push(`plan.json: ${(e as Error).message}`);
  }
  return null;
}

/** An events line longer than this is not a run event (gpuplan's are under a few KiB): it is skipped, never held. */
const MAX_EVENT_LINE_BYTES = 4 * 1024 * 1024;

/**
 * The run events of events.jsonl, read a line at a time (read-lines.ts): what is kept is the
 * events, never the file's text. A line that repeats an event already read (repeated-events.ts)
 * is read once, and a note says so.
 */
async function readEvents(
  runDir: string,
  notes: string[],
): Promise<{ events: RunEvent[]; firstBadLine: number | null }> {
  const opened = await openInFolder(await realFolder(runDir), join(runDir, "events.jsonl"));
  if ("refused" in opened) {
    notes.push(`events.jsonl: ${opened.refused}`);
    return { events: [], firstBadLine: null };
  }
  const { handle, size } = opened;
  const { default: validate } = await import("../generated/run-events-validator.js");
  const events: RunEvent[] = [];
  const repeats = new RepeatedEvents();
  let bad = 0;
  let firstBad = 0;
  let newer = false;
  try {
    if (size > MAX_EVENTS_BYTES) {
      notes.push(`events.jsonl: ${size} bytes, more than a report reads (${MAX_EVENTS_BYTES})`);
      return { events: [], firstBadLine: null };
    }
    for await (const { number, text } of readLines(handle, MAX_EVENT_LINE_BYTES)) {
      if (text !== null && text.trim() === "") continue;
      let data: unknown;
      try {
        data = text === null ? undefined : JSON.parse(text);
      } catch {
        data = undefined;
      }
      // The run.summary line is the JSON view's, never in events.jsonl; a copy appended by hand is not a run event here.
      if (
        data !== undefined &&
        validate(data) &&
        (data as RunEvent).event !== ("run.summary" as string) &&
        hasRealTime(data as RunEvent)
      ) {
        if (!repeats.isRepeat(data as RunEvent, number)) events.push(data as RunEvent);
        continue;
      }
      const schema = (data as { schema?: unknown } | undefined)?.schema;
      if (
        typeof schema === "string" &&
        schema.startsWith("gpuplan/run-events@") &&
        schema !== "gpuplan/run-events@1"
      )
        newer = true;
      if (bad++ === 0) firstBad = number;
    }
  } catch (e) {
    notes.push(
      `events.jsonl: ${(e as NodeJS.ErrnoException).code ?? (e as Error).message}; read up to there`,
    );
  } finally {
    await handle.close().catch(() => undefined);
  }
  if (newer)
    notes.push(
      "events.jsonl: written by a newer gpuplan (another run-events version); some events were not read",
    );
  if (bad > 0)
    notes.push(
      `events.jsonl: ${bad} line(s) are not run events and were left out (the first is line ${firstBad})`,
    );
  if (repeats.count > 0)
    notes.push(
      `events.jsonl: ${repeats.count} line(s) repeat an event already read and were read once (the first is line ${repeats.firstLine})`,
    );
  return { events, firstBadLine: bad > 0 ? firstBad : null };
}

/** The log `path` an event names, in this run folder (the event names it as seen from where gpuplan ran). */
function logInFolder(runDir: string, path: string): string {
  const rel = relative(".", path).split(sep);
  const at = rel.lastIndexOf("logs");
  return at >= 0 ? join(runDir, ...rel.slice(at)) : join(runDir, "logs", basename(path));
}

async function readStderrTails(
  runDir: string,
  events: readonly RunEvent[],
  notes: string[],
): Promise<Map<string, string[]>> {
  const tails = new Map<string, string[]>();
  const folder = await realFolder(runDir);
  const logs = await logNames(runDir);
  const refused: string[] = [];
  let budget = OK_TAILS_BUDGET;
  for (const e of events) {
    if (e.event !== "gpu.step.end") continue;
    const key = attemptKey(e.pipeline, e.step, e.attempt);
    if (e.status !== "ok" && e.stderrTail && e.stderrTail.length > 0) {
      tails.set(key, e.stderrTail.slice(-FAILED_TAIL_LINES).map(clip));
      continue;
    }
    const file = e.stderrPath ?? e.logPath;
    if (!file || budget <= 0) continue;
    const path = logInFolder(runDir, file);
    // Not listed: not there (a step that wrote nothing, or pruned logs), and nothing to say.
    if (logs !== null && dirname(path) === join(runDir, "logs") && !logs.has(basename(path))) continue;
    const lines = await lastLines(folder, path, e.status === "ok" ? OK_TAIL_LINES : FAILED_TAIL_LINES);
    if (typeof lines === "string") {
      refused.push(`${relative(runDir, path)} (${lines})`);
      continue;
    }
    if (lines.length === 0) continue;
    if (e.status === "ok") budget -= lines.reduce((n, l) => n + l.length, 0);
    tails.set(key, lines);
  }
  // One note, however many: a folder of planted links must not make a page of notes.
  if (refused.length > 0)
    notes.push(
      `logs: ${refused.length} log file(s) not read, their last lines not shown: ${refused[0]}${refused.length > 1 ? `, and ${refused.length - 1} more` : ""}`,
    );
  return tails;
}

/**
 * The names in the run's logs/ folder, read once, or null when it cannot be listed (then each log
 * is opened to find out). Opening each attempt's log to learn that it is missing cost a report of
 * 100,000 steps whose steps wrote no stderr (or whose logs were pruned) 100,000 failed opens,
 * 16 s of its time. A name listed is still opened with every check (openInFolder).
 */
async function logNames(runDir: string): Promise<Set<string> | null> {
  try {
    return new Set(await readdir(join(runDir, "logs")));
  } catch (e) {
    // No logs/ at all: no log is there to read.
    return errnoOf(e) === "ENOENT" ? new Set() : null;
  }
}

/**
 * The last `n` lines of a log in the run folder (read from its last few KiB); none when it is
 * missing or empty; why not, when it could not be opened as a regular file inside the folder.
 */
async function lastLines(folder: string, path: string, n: number): Promise<string[] | string> {
  const opened = await openInFolder(folder, path, true);
  // A step that wrote nothing has no log: nothing to say. Anything else is said.
  if ("refused" in opened) return opened.refused === "missing" ? [] : opened.refused;
  const { handle, size } = opened;
  try {
    if (size === 0) return [];
    const length = Math.min(TAIL_BYTES, size);
    const buffer = Buffer.alloc(length);
    await handle.read(buffer, 0, length, size - length);
    const lines = buffer.toString("utf8").split("\n");
    // The first line is cut unless the read started at the file's beginning.
    if (length < size) lines.shift();
    return lines
      .filter((l) => l.trim() !== "")
      .slice(-n)
      .map(clip);
  } catch {
    return [];
  } finally {
    await handle.close().catch(() => undefined);
  }
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: terminal escape sequences are what is removed
const TERMINAL_SEQUENCE = /\u001b\[[0-9;?]*[ -/]*[@-~]|\u001b\][^\u0007\u001b]*(\u0007|\u001b\\)?/g;
// biome-ignore lint/suspicious/noControlCharactersInRegex: so are the other control characters
const CONTROL = /[\u0000-\u0008\u000b-\u001f\u007f]/g;

/** A log line for a page: colour and cursor codes left out, other control characters shown as �, long lines cut. */
function clip(line: string): string {
  const text = line.replace(TERMINAL_SEQUENCE, "").replace(CONTROL, "\ufffd");
  return text.length > MAX_LINE_CHARS ? `${text.slice(0, MAX_LINE_CHARS)}…` : text;
}
