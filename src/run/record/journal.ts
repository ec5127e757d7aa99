/**
 * The run directory `.gpuplan/runs/<run-id>/`: `plan.json` (the exact plan being run, so a resume
 * runs the same plan even when the pipeline file was compiled in memory), `journal.jsonl` (a line
 * when a step attempt's process starts, with its pid, and one when the attempt ends, appended and
 * flushed to disk before the step is reported done),
 * `events.jsonl` (telemetry) and the step logs, `logs/<pipeline>@<step>.out.log` and `.err.log`.
 */

import { constants } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { dirname, join } from "node:path";
import { planText } from "../../plan/plan-text.js";
import { UsageError } from "../../problems/errors.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";
import { forEachLine } from "../../text/each-line.js";
import { isBootId } from "../step/boot-id.js";
import type { StepStatus } from "./events.js";
import { planDigest } from "./plan-digest.js";
import { damagedRun, readRunFile } from "./read-run-file.js";
import { DELETED_WHILE_RUNNING, isDeleted, type RecordFailures } from "./record-failures.js";

/** node:fs/promises at first use: a dry run imports this module (RUNS_DIR) but writes nothing (#17). */
const fsp = () => process.getBuiltinModule("node:fs/promises");

export const RUNS_DIR = join(".gpuplan", "runs");

interface JournalHeader {
  type: "run";
  run: string;
  startedAt: string;
  /** The plan file (or pipeline file) the run was started from, as given. */
  input: string;
  /** Directory step `cwd`s are resolved against (absolute). */
  baseDir: string;
  pipelines: string[];
  /**
   * SHA-256 (hex) of plan.json's bytes as the run wrote them: `--resume` refuses a plan.json that
   * no longer matches, since the journal's completed steps are that plan's. Absent in journals of
   * older gpuplans (and of run folders their exported sbatch scripts made, or an exported array's
   * first task on a node without sha256sum), which resume unchecked.
   */
  planSha256?: string;
  /**
   * The boot the run started in (/proc/sys/kernel/random/boot_id), for whoever reads the folder;
   * what decides whether an attempt may still run is its own start entry's, since a resume after
   * a reboot appends its attempts under this header. Absent in older journals and where unknown.
   */
  bootId?: string;
}

interface JournalStep {
  type: "step";
  ts: string;
  pipeline: string;
  step: string;
  status: StepStatus | "skipped";
  attempt: number;
  device: string;
  exitCode: number | null;
  durationMs: number;
}

/**
 * A step attempt's process has started: its pid (its process group's id) and, on Linux, its start
 * time, so that a resume after gpuplan was killed can wait for a step that still runs.
 */
export interface JournalStart {
  type: "start";
  ts: string;
  pipeline: string;
  step: string;
  attempt: number;
  device: string;
  pid: number;
  /** /proc/PID/stat's start time (clock ticks since boot), or null where unknown. */
  startTicks: number | null;
  /**
   * The boot pid and startTicks belong to (src/run/step/boot-id.ts): an attempt started in another
   * boot is gone. Absent in older journals and where unknown, where pid and startTicks decide alone.
   */
  bootId?: string;
}

interface JournalEnd {
  type: "end";
  ts: string;
  /**
   * The pipelines this session ran (a resume may run fewer than the run covers); absent in
   * journals of older gpuplans, where a session is taken to have run them all.
   */
  pipelines?: string[];
  interrupted: boolean;
  ok: number;
  failed: number;
  skipped: number;
  /**
   * A Slurm run's submission failed before slurm/jobs.json named any of its arrays (sbatch refused
   * one after others were queued, or gave a repeated id): what went wrong, and whether arrays of
   * it may still be in Slurm (scancel failed, or sbatch's answer was lost) — src/slurm/follow/submit-failure.ts.
   */
  submitFailed?: { reason: string; mayRun: boolean };
}

/**
 * A Slurm run's submission is about to call sbatch for `script` (at `path`, as given to sbatch): an
 * array may be queued from here on that slurm/jobs.json does not name yet. Written (and flushed)
 * before each sbatch, so that a resume after gpuplan was killed in between knows to look for it
 * (src/slurm/follow/unrecorded-arrays.ts).
 */
export interface JournalSbatch {
  type: "sbatch";
  ts: string;
  /** The script's name in the run's slurm/ (`01-cpu.sbatch`). */
  script: string;
  /** The script's absolute path, as sbatch got it: Slurm keeps it as the job's command. */
  path: string;
  /** Task i of the array runs pipelines[i]. */
  pipelines: string[];
}

/**
 * Every array the `sbatch` entries before it may have queued is in slurm/jobs.json (`jobs`: those
 * this entry accounts for) or not in Slurm: the submission ended, failed with its arrays
 * cancelled, or a resume asked Slurm and recorded what it found.
 */
interface JournalRecorded {
  type: "recorded";
  ts: string;
  jobs: string[];
}

type JournalEntry = JournalHeader | JournalStart | JournalStep | JournalEnd | JournalSbatch | JournalRecorded;

/**
 * Appends in order; an append resolves once its entry is on disk (fdatasync) — or, when the disk
 * refuses it (full, over quota), once that is reported to `failures`: the entry stays queued and
 * goes out with the next append or at close, so a step finished while the disk was full is still
 * recorded once space is freed, and the run never stops for its journal.
 */
export interface Journal {
  /** `durable: false` (a step's start): written at once but not waited on with an fdatasync. */
  append(entry: JournalEntry, durable?: boolean): Promise<void>;
  close(): Promise<void>;
}

export async function openJournal(runDir: string, failures?: RecordFailures): Promise<Journal> {
  return openJournalFile(join(runDir, "journal.jsonl"), failures);
}

/** A journal at `path`: a Slurm array task keeps its own beside its run's (src/slurm/follow/run-record.ts). */
export async function openJournalFile(path: string, failures?: RecordFailures): Promise<Journal> {
  // Not O_APPEND: writes go at `end`, the last acknowledged byte, so a write cut short by a full
  // disk is overwritten by its retry instead of leaving half a line in the middle.
  const handle = await fsp().open(path, constants.O_RDWR | constants.O_CREAT, 0o644);
  let end = await dropTornLine(handle);
  // Group commit: entries that arrive while a flush is in flight go out together in the next
  // write + fdatasync, so many steps finishing at once cost one disk flush, not one each.
  let pending: string[] = [];
  let queued: { line: string; durable: boolean; done: () => void }[] = [];
  let flushing: Promise<void> | null = null;
  const write = async (text: Buffer, durable = true): Promise<void> => {
    for (let off = 0; off < text.length; ) {
      off += (await handle.write(text, off, text.length - off, end + off)).bytesWritten;
    }
    if (durable) {
      await handle.datasync();
      // Beside the flush it costs nothing: a journal deleted with its run folder takes every entry
      // with it (writes still succeed), and --resume has nothing to go on. Said as it is found.
      if (isDeleted(await handle.stat())) failures?.lost(path, new Error(DELETED_WHILE_RUNNING));
    }
    end += text.length;
  };
  const flush = async (): Promise<void> => {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      const lines = [...pending, ...batch.map((b) => b.line)];
      try {
        await write(Buffer.from(lines.join("")), pending.length > 0 || batch.some((b) => b.durable));
        pending = [];
      } catch (e) {
        // Kept for the next flush; what was written of it is overwritten then.
        pending = lines;
        failures?.failed(path, e);
        await handle.truncate(end).catch(() => undefined);
      }
      for (const b of batch) b.done();
    }
    flushing = null;
  };
  return {
    append(entry, durable = true) {
      return new Promise<void>((done) => {
        queued.push({ line: `${JSON.stringify(entry)}\n`, durable, done });
        flushing ??= flush();
      });
    },
    async close() {
      await flushing;
      if (pending.length > 0) {
        try {
          await write(Buffer.from(pending.join("")));
        } catch (e) {
          failures?.lost(path, e);
        }
      }
      if (isDeleted(await handle.stat())) failures?.lost(path, new Error(DELETED_WHILE_RUNNING));
      await handle.close();
    },
  };
}

/** The longest line a torn write can leave (an entry is far shorter). */
const MAX_TORN_BYTES = 1024 * 1024;

/**
 * A resumed journal may end in a torn line (gpuplan killed mid-write; readJournal left it out as
 * never acknowledged): cut it off, or the next entry would be glued to it and lost with it.
 */
async function dropTornLine(handle: FileHandle): Promise<number> {
  const { size } = await handle.stat();
  if (size === 0) return 0;
  const from = Math.max(0, size - MAX_TORN_BYTES);
  const tail = Buffer.alloc(size - from);
  await handle.read(tail, 0, tail.length, from);
  if (tail[tail.length - 1] === 0x0a) return size;
  const end = tail.lastIndexOf(0x0a);
  if (end < 0 && from > 0) return size;
  await handle.truncate(from + end + 1);
  return from + end + 1;
}

/**
 * A new run's folder is there already: another run drew the same id in the same second (its
 * suffix is 24 random bits). Made with mkdir alone, never into an existing folder, whose plan.json
 * the new run would overwrite (its --resume then refused as changed) and whose journal it would
 * append to.
 */
export class RunFolderTaken extends UsageError {
  constructor(runDir: string) {
    super(
      `cannot make the run folder ${runDir}: it exists already (another run has its id)`,
      "unwritable-file",
      "start the run again: it draws a new id",
    );
  }
}

/**
 * Create the run directory, for this run alone (RunFolderTaken where it is there), and write the
 * plan into it: `text` when the plan file given already holds these very bytes (prepare-run.ts
 * says when), else the plan's text made anew. Returns the SHA-256 of the bytes written, for the
 * journal's header (planSha256).
 */
export async function createRunDir(runDir: string, plan: GpuplanPlan, text?: string): Promise<string> {
  const bytes = Buffer.from(text ?? planText(plan), "utf8");
  await fsp().mkdir(dirname(runDir), { recursive: true });
  try {
    await fsp().mkdir(runDir);
  } catch (e) {
    if (errnoOf(e) === "EEXIST") throw new RunFolderTaken(runDir);
    throw e;
  }
  const planPath = join(runDir, "plan.json");
  try {
    await fsp().mkdir(join(runDir, "logs"));
    await fsp().writeFile(planPath, bytes);
  } catch (e) {
    // A full disk or a file size limit cut plan.json short: a folder without its journal would be
    // listed as a run gpuplan was stopped in, and --resume would call it damaged. Nothing ran yet,
    // and the folder is this run's own (made above): it goes.
    await fsp()
      .rm(runDir, { recursive: true, force: true })
      .catch(() => undefined);
    throw fileError(e, planPath, "write", "the run's plan");
  }
  return planDigest(bytes);
}

/** How often a new run draws its id again when the one it drew is taken (each time 1 in 16.7 million). */
const RUN_ID_DRAWS = 8;

/**
 * A new run's folder under the folder of `runDir`, made by createRunDir: where another run took
 * its id (two runs started in the same second), a new id from `drawId` — the run's id is its
 * folder's name. Returns the id and folder the run has, and its plan's digest.
 */
export async function createOwnRunDir(
  runId: string,
  runDir: string,
  plan: GpuplanPlan,
  text: string | undefined,
  drawId: () => string,
): Promise<{ runId: string; runDir: string; planSha256: string }> {
  for (let draw = 1; ; draw++) {
    try {
      return { runId, runDir, planSha256: await createRunDir(runDir, plan, text) };
    } catch (e) {
      if (!(e instanceof RunFolderTaken) || draw === RUN_ID_DRAWS) throw e;
      runId = drawId();
      runDir = join(dirname(runDir), runId);
    }
  }
}

export interface JournalState {
  header: JournalHeader;
  /** `pipeline\u0000step` of every step whose last recorded attempt ended ok. */
  completed: Set<string>;
  /** The highest attempt number each step has used, by stepKey: a resumed attempt is the next. */
  attempts: Map<string, number>;
  /** Attempts whose process started but whose end was never recorded (gpuplan was killed). */
  unfinished: JournalStart[];
  entries: JournalEntry[];
}

export const stepKey = (pipeline: string, step: string): string => `${pipeline}\u0000${step}`;

/**
 * Read a run's journal for `--resume`. A torn last line (gpuplan killed mid-write) is left out:
 * it was never acknowledged. Anything else that is not an entry gpuplan writes — a line that is
 * not JSON, `null`, an entry without its fields, no run header first — is a `damaged-run` error
 * naming the file and the line, never a guess.
 */
export async function readJournal(runDir: string): Promise<JournalState> {
  return readJournalFile(join(runDir, "journal.jsonl"));
}

/** The journal at `path`, read as readJournal reads a run's. */
export async function readJournalFile(path: string): Promise<JournalState> {
  const text = await readRunFile(path, "journal");
  const entries: JournalEntry[] = [];
  forEachLine(text, (line, i, last) => {
    if (!line.trim()) return;
    let value: unknown;
    try {
      value = JSON.parse(line);
    } catch {
      // The last line without its newline is a write cut short; anything before it was acknowledged.
      if (last) return;
      throw damagedRun(path, `line ${i + 1} is not JSON`);
    }
    const wrong = entryProblem(value);
    if (wrong) throw damagedRun(path, `line ${i + 1} ${wrong}`);
    if (i === 0 && (value as JournalEntry).type !== "run")
      throw damagedRun(path, "does not start with a run header");
    entries.push(value as JournalEntry);
  });
  const completed = new Set<string>();
  const header = entries.find((e): e is JournalHeader => e.type === "run");
  if (!header) throw damagedRun(path, "has no run header (it is empty)");
  const attempts = new Map<string, number>();
  const started = new Map<string, JournalStart>();
  const attemptKey = (e: { pipeline: string; step: string; attempt: number }) =>
    `${stepKey(e.pipeline, e.step)}\u0000${e.attempt}`;
  for (const e of entries) {
    if (e.type !== "step" && e.type !== "start") continue;
    const key = stepKey(e.pipeline, e.step);
    attempts.set(key, Math.max(attempts.get(key) ?? 0, e.attempt));
    if (e.type === "start") {
      started.set(attemptKey(e), e);
      continue;
    }
    started.delete(attemptKey(e));
    if (e.status === "ok") completed.add(key);
    else completed.delete(key);
  }
  return { header, completed, attempts, unfinished: [...started.values()], entries };
}

/** What makes `value` not a journal entry gpuplan wrote, or null when it is one. */
function entryProblem(value: unknown): string | null {
  if (typeof value !== "object" || value === null || Array.isArray(value))
    return `is ${value === null ? "null" : Array.isArray(value) ? "an array" : typeof value}, not a journal entry`;
  const e = value as Record<string, unknown>;
  const strings = (...keys: string[]) => keys.filter((k) => typeof e[k] !== "string");
  let missing: string[];
  if (e.type === "run") {
    missing = strings("run", "startedAt", "input", "baseDir");
    if (!Array.isArray(e.pipelines) || !e.pipelines.every((p) => typeof p === "string"))
      missing.push("pipelines");
    // Optional (older journals have none), but one that is there is a digest or the header is not ours.
    if (
      e.planSha256 !== undefined &&
      !(typeof e.planSha256 === "string" && /^[0-9a-f]{64}$/.test(e.planSha256))
    )
      return "is a run entry whose planSha256 is not a SHA-256 digest";
    if (e.bootId !== undefined && !isBootId(e.bootId))
      return "is a run entry whose bootId is not a boot id (a UUID)";
  } else if (e.type === "step") {
    missing = strings("pipeline", "step", "status");
    // 0: a step skipped without running. A resume numbers its attempts on from the highest.
    const wrong = wholeNumberProblem(e, "attempt", 0, MAX_ATTEMPT, missing);
    if (wrong) return `is a step entry whose ${wrong}`;
  } else if (e.type === "start") {
    missing = strings("pipeline", "step");
    const wrong =
      wholeNumberProblem(e, "attempt", 1, MAX_ATTEMPT, missing) ??
      wholeNumberProblem(e, "pid", 1, Number.MAX_SAFE_INTEGER, missing);
    if (wrong) return `is a start entry whose ${wrong}`;
    // Like planSha256: optional, but one that is there decides liveness, so it must be one.
    if (e.bootId !== undefined && !isBootId(e.bootId))
      return "is a start entry whose bootId is not a boot id (a UUID)";
  } else if (e.type === "end") {
    missing = [];
  } else if (e.type === "sbatch") {
    missing = strings("script", "path");
    if (!isStringList(e.pipelines)) missing.push("pipelines");
  } else if (e.type === "recorded") {
    missing = [];
    // Job ids as sbatch --parsable gives them, as slurm/jobs.json holds them.
    if (!isStringList(e.jobs) || !(e.jobs as string[]).every((j) => /^[0-9]+$/.test(j)))
      return "is a recorded entry whose jobs are not a list of job ids";
  } else {
    return `has no known entry type (${JSON.stringify(e.type ?? null).slice(0, 40)})`;
  }
  return missing.length > 0 ? `is a ${e.type} entry without ${missing.join(", ")}` : null;
}

const isStringList = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === "string");

/**
 * More attempts of one step than any run makes, however often resumed: a journal saying more is
 * not one gpuplan wrote (1e300 would be numbered on as 1e300, and named in log files so).
 */
const MAX_ATTEMPT = 1_000_000;

/**
 * What is wrong with `e[key]`, which must be a whole number from `min` to `max` ("attempt 1e300
 * is not a whole number from 0 to 1000000"); an absent one is pushed to `missing` instead. Only a
 * number's own text is shown: anything else read from the file is named by its type.
 */
function wholeNumberProblem(
  e: Record<string, unknown>,
  key: string,
  min: number,
  max: number,
  missing: string[],
): string | null {
  const v = e[key];
  if (v === undefined) {
    missing.push(key);
    return null;
  }
  if (Number.isInteger(v) && (v as number) >= min && (v as number) <= max) return null;
  return `${key} ${typeof v === "number" ? v : `(${kindOfValue(v)})`} is not a whole number from ${min} to ${max}`;
}

const kindOfValue = (v: unknown): string =>
  v === null ? "null" : Array.isArray(v) ? "an array" : typeof v === "object" ? "an object" : `a ${typeof v}`;
