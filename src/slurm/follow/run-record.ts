/**
 * What a Slurm run keeps in its run folder, beside the plan, journal and events every run has:
 * `slurm/` holds the sbatch scripts (as `gpuplan export` writes them), `jobs.json` (each array's
 * job id and pipelines, appended to by --resume), `events/JOB_TASK.jsonl` (each task's own
 * events), `journals/JOB_TASK.jsonl` (each task's own journal: its steps' attempts, what a resume
 * trusts), `started/JOB_TASK` (the marker a task writes first: its node and GPUs; the submitter
 * seeing it proves the folder is shared) and `logs/` (Slurm's output of each task). The tasks'
 * step logs go to the run folder's `logs/`, as a local run's do. Follower, `gpuplan status` and
 * `--resume` all read the run from here.
 */
import { lstat, mkdir, readdir, rm } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../plan/write-atomic.js";
import { UsageError } from "../../problems/errors.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";
import { displayText } from "../../text/safe-text.js";
import { MAX_ARRAY_TASKS } from "../job-arrays.js";
import { MISSING, readTaskFile, readTaskText } from "./read-task-file.js";
import { hasSlurmFolder, slurmRecordFile } from "./slurm-folder.js";

export interface SubmittedArray {
  job: string;
  script: string;
  /** Task i runs pipelines[i]. */
  pipelines: string[];
}

export interface SlurmRunRecord {
  schema: "gpuplan/slurm-run@1";
  arrays: SubmittedArray[];
}

export const slurmDir = (runDir: string): string => join(runDir, "slurm");
export const taskJournalDir = (runDir: string): string => join(slurmDir(runDir), "journals");
/** A task's own journal and events in the run folder; `task` is `JOB_TASK`. */
export const taskJournalPath = (runDir: string, task: string): string =>
  join(taskJournalDir(runDir), `${task}.jsonl`);
export const taskEventsPath = (runDir: string, task: string): string =>
  join(slurmDir(runDir), "events", `${task}.jsonl`);

/** Makes the run's slurm/ folder and the folders in it the submitter writes. */
export async function makeSlurmDirs(runDir: string): Promise<void> {
  await makeSlurmFolders(runDir, ["", "logs", "events", "started", "journals"]);
}

/**
 * Makes each of `names` (folders of the run's slurm/, "" for slurm/ itself, parents first) where
 * it is not there. gpuplan writes its scripts and records here at paths it chose: a link planted
 * in the run folder (slurm -> ~/bin) would put them where the link points, so none is followed;
 * and anything else standing where a folder belongs (a file, a FIFO) is the user's to move, said
 * naming it — mkdir -p said EEXIST or ENOTDIR, which read as gpuplan's own bug.
 */
export async function makeSlurmFolders(runDir: string, names: readonly string[]): Promise<void> {
  for (const d of names) {
    const path = join(slurmDir(runDir), d);
    try {
      // Not -p: the run folder is there (a task's, the submitter's), and one removed is not made anew.
      await mkdir(path);
      continue;
    } catch (e) {
      if (errnoOf(e) !== "EEXIST") throw fileError(e, path, "write", "the run's Slurm records folder");
    }
    const info = await lstat(path).catch((e: unknown) => {
      throw fileError(e, path, "write", "the run's Slurm records folder");
    });
    if (info.isDirectory()) continue;
    if (info.isSymbolicLink())
      throw new UsageError(
        `cannot write the run's Slurm records: ${path} is a symbolic link, and gpuplan follows none in a run folder`,
        "unwritable-file",
        "replace the link with a real folder (someone who could write in the run folder may have planted it)",
      );
    throw new UsageError(
      `cannot make the run's Slurm records folder ${path}: ${kindOf(info)} stands there`,
      "unwritable-file",
      "move it out of the way (gpuplan keeps the run's Slurm records in that folder), or start a new run",
    );
  }
}

function kindOf(info: { isFIFO(): boolean; isSocket(): boolean; isFile(): boolean }): string {
  if (info.isFile()) return "a file";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  return "a device";
}

/**
 * The run's submitted arrays (none before the first submission). A record that is not the one
 * gpuplan wrote (a hand edit, a damaged disk) is said to be damaged, naming the file: squeue,
 * status and --resume cannot know the run's jobs without it.
 */
export async function readSlurmRecord(runDir: string): Promise<SlurmRunRecord> {
  const file = slurmRecordFile(runDir);
  const read = readTaskFile(runDir, "jobs.json", { maxBytes: MAX_RECORD_BYTES });
  if (!("bytes" in read)) {
    if (read.refused === MISSING) {
      // A file where slurm/ belongs reads as jobs.json missing too (ENOTDIR): hasSlurmFolder
      // throws that as damage, never "nothing submitted".
      hasSlurmFolder(runDir);
      return { schema: SCHEMA, arrays: [] };
    }
    throw damagedRecord(file, read.refused);
  }
  if (read.size > MAX_RECORD_BYTES)
    throw damagedRecord(file, `it is ${read.size} bytes, more than gpuplan writes`);
  const data = readSlurmRecordText(read.bytes.toString("utf8"));
  if ("wrong" in data) throw damagedRecord(file, data.wrong);
  return data;
}

/** jobs.json names each array's job id and pipelines: 64 MiB is thousands of resumes of thousands of tasks. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

function damagedRecord(file: string, wrong: string): UsageError {
  return new UsageError(
    `${file} is damaged: ${wrong}`,
    "damaged-run",
    "restore the file (each array's job id, script and pipelines), or start a new run",
  );
}

/** slurm/jobs.json's text as the record gpuplan wrote, or null when it is not that (outside text). */
export function parseSlurmRecord(text: string): SlurmRunRecord | null {
  const read = readSlurmRecordText(text);
  return "wrong" in read ? null : read;
}

const SCHEMA = "gpuplan/slurm-run@1";

/**
 * slurm/jobs.json's text as the record gpuplan wrote, or what is wrong with it. A record that
 * reads only in part is not used in part: a job named twice would be asked of and cancelled as
 * two arrays, a pipeline twice in one array would be two tasks of one pipeline (which of them is
 * its latest?), and a record of another schema version is one this gpuplan cannot read rightly.
 */
function readSlurmRecordText(text: string): SlurmRunRecord | { wrong: string } {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return { wrong: NOT_THE_RECORD };
  }
  if (typeof data === "object" && data !== null && "schema" in data && data.schema !== SCHEMA)
    return {
      wrong:
        typeof data.schema === "string"
          ? `it is of schema ${displayText(data.schema, 80)}, and this gpuplan reads ${SCHEMA} (was the run made by another version of gpuplan?)`
          : NOT_THE_RECORD,
    };
  if (!isSlurmRecord(data)) return { wrong: NOT_THE_RECORD };
  if (data.arrays.length > MAX_RECORD_ARRAYS)
    return {
      wrong: `it names ${data.arrays.length} job arrays, more than the ${MAX_RECORD_ARRAYS} gpuplan keeps for one run`,
    };
  const tasks = data.arrays.reduce((n, a) => n + a.pipelines.length, 0);
  if (tasks > MAX_RECORD_TASKS)
    return { wrong: `it names ${tasks} tasks, more than gpuplan's own record of them can hold` };
  const jobs = new Set<string>();
  for (const a of data.arrays) {
    if (jobs.has(a.job)) return { wrong: `it names job ${a.job} twice` };
    jobs.add(a.job);
    if (a.pipelines.length === 0)
      return { wrong: `job ${a.job} runs no pipeline (gpuplan submits no empty array)` };
    if (a.pipelines.length > MAX_ARRAY_TASKS)
      return {
        wrong: `job ${a.job} runs ${a.pipelines.length} pipelines, more than the ${MAX_ARRAY_TASKS} tasks gpuplan puts in one array`,
      };
    const twice = firstRepeated(a.pipelines);
    if (twice !== undefined)
      return { wrong: `job ${a.job} runs pipeline ${displayText(twice, 80)} twice (one task per pipeline)` };
  }
  return data;
}

/**
 * The most arrays a run's record may name: status, --resume and the follower ask squeue (and
 * sacct) of each, 1,000 a call, so a hostile record of millions kept them asking for minutes.
 * gpuplan submits at most one array per pipeline (fewer: one per resource request, split at
 * MAX_ARRAY_TASKS), and 100,000 is ten submissions of the 10,000 arrays of the largest plan
 * limits.max_pipelines lets a file expand to — far past the jobs a Slurm cluster holds
 * (MaxJobCount, 10,000 by default).
 */
export const MAX_RECORD_ARRAYS = 100_000;

/**
 * The most tasks of all arrays together: as many as MAX_RECORD_BYTES holds as gpuplan writes the
 * record (each task a line of at least 13 bytes, `        "a",`), so none gpuplan wrote is refused
 * for it, while one written tight by hand (a third of that per task) is.
 */
export const MAX_RECORD_TASKS = Math.floor(MAX_RECORD_BYTES / 13);

/** The first item met a second time; a Set, as indexOf for each was quadratic in the tasks. */
function firstRepeated(items: readonly string[]): string | undefined {
  const seen = new Set<string>();
  for (const item of items) {
    if (seen.has(item)) return item;
    seen.add(item);
  }
  return undefined;
}

const NOT_THE_RECORD = "it is not the list of the run's Slurm job arrays gpuplan wrote";

const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === "string");

function isSlurmRecord(data: unknown): data is SlurmRunRecord {
  if (
    typeof data !== "object" ||
    data === null ||
    !("schema" in data) ||
    data.schema !== SCHEMA ||
    !("arrays" in data) ||
    !Array.isArray(data.arrays)
  )
    return false;
  return data.arrays.every(
    (a: unknown) =>
      typeof a === "object" &&
      a !== null &&
      // A job id as sbatch --parsable gave it (digits): squeue, sacct and scancel get it as an argument.
      typeof (a as SubmittedArray).job === "string" &&
      /^[0-9]+$/.test((a as SubmittedArray).job) &&
      typeof (a as SubmittedArray).script === "string" &&
      isStrings((a as SubmittedArray).pipelines),
  );
}

/**
 * Appends `arrays` to the run's record, `recorded` (as read under the run's lock, which is held
 * still: checkRecordRoom said, before sbatch, that they fit).
 */
export async function recordArrays(
  runDir: string,
  recorded: readonly SubmittedArray[],
  arrays: readonly SubmittedArray[],
): Promise<void> {
  await writeFileAtomic(
    slurmRecordFile(runDir),
    recordText([...recorded, ...arrays]),
    "file",
    undefined,
    "chosen",
  );
}

/**
 * The record put back as it was before a submission that failed (its arrays cancelled): `recorded`,
 * or no file where it named none — a run with no record is one whose submission failed
 * (submit-failure.ts). Best effort: a record that still names the cancelled arrays is safe, as
 * squeue says they ended.
 */
export async function restoreRecord(runDir: string, recorded: readonly SubmittedArray[]): Promise<void> {
  const done =
    recorded.length === 0
      ? rm(slurmRecordFile(runDir), { force: true })
      : writeFileAtomic(slurmRecordFile(runDir), recordText(recorded), "file", undefined, "chosen");
  await done.catch(() => undefined);
}

/** slurm/jobs.json as gpuplan writes it. */
export const recordText = (arrays: readonly SubmittedArray[]): string =>
  `${JSON.stringify({ schema: SCHEMA, arrays }, null, 2)}\n`;

/**
 * The bytes recordText writes for `arrays`, counted one array at a time and only until past
 * `limit`: the text of a record far past it may be longer than a string can be. Each array is
 * written as JSON.stringify writes it alone, indented 4 more on each of its lines, and joined by
 * `,\n` into `[\n … \n  ]` where an empty record has `[]`.
 */
export function recordSize(arrays: readonly SubmittedArray[], limit: number): number {
  let size = Buffer.byteLength(recordText([]));
  if (arrays.length === 0) return size;
  size += 2;
  for (const a of arrays) {
    const text = JSON.stringify(a, null, 2);
    let lines = 1;
    for (let i = text.indexOf("\n"); i !== -1; i = text.indexOf("\n", i + 1)) lines++;
    size += Buffer.byteLength(text) + 4 * lines + 2;
    if (size > limit) return size;
  }
  return size;
}

/** The marker a task wrote when it started: `HOST GPUS`, or null while there is none. */
export function readStartMarker(runDir: string, task: string): { node: string; gpus: string | null } | null {
  // A marker is one short line (`HOST GPUS`); a FIFO, a link or a huge file in its place is none.
  const text = readTaskText(runDir, join("started", task), { maxBytes: MAX_MARKER_BYTES });
  if (typeof text !== "string") return null;
  const [node = "", gpus = ""] = text.trim().split(/\s+/);
  return { node, gpus: gpus === "" ? null : gpus };
}

const MAX_MARKER_BYTES = 4096;

export type PipelineEnding = "ok" | "failed" | "interrupted";

/**
 * How each pipeline's latest task ended by its own account (the `run.end` of its events file);
 * pipelines whose latest task never wrote one are missing, even where an earlier task (before a
 * resume) did.
 */
export async function taskEndings(
  runDir: string,
  /** The run's record, where the caller has read it already. */
  given?: SlurmRunRecord,
): Promise<Map<string, PipelineEnding>> {
  const ends = await taskEnds(runDir, given);
  return new Map([...ends].map(([pipeline, end]) => [pipeline, end.status]));
}

export interface TaskEnd {
  status: PipelineEnding;
  /** The run.end's own time (ISO 8601), where it said one that reads as a time. */
  ts: string | null;
}

/** taskEndings, with when each task said it ended. */
export async function taskEnds(runDir: string, given?: SlurmRunRecord): Promise<Map<string, TaskEnd>> {
  const record = given ?? (await readSlurmRecord(runDir));
  const endings = new Map<string, TaskEnd>();
  const files = new Set(await readdir(join(slurmDir(runDir), "events")).catch(() => [] as string[]));
  for (const a of record.arrays) {
    for (const [i, pipeline] of a.pipelines.entries()) {
      const file = `${a.job}_${i}.jsonl`;
      // A later task that has written nothing yet (queued) says the earlier one's end is not the last.
      if (!files.has(file)) {
        endings.delete(pipeline);
        continue;
      }
      const end = lastRunEnd(readEventsTail(runDir, file));
      if (end) endings.set(pipeline, end);
      else endings.delete(pipeline);
    }
  }
  return endings;
}

/** Whether the task (`JOB_TASK`) wrote its run.end: it ended by its own account. */
export async function hasTaskEnded(runDir: string, task: string): Promise<boolean> {
  return lastRunEnd(readEventsTail(runDir, `${task}.jsonl`)) !== null;
}

/**
 * How much of a task's events file is read for its ending: its last run.start or run.end is near
 * its end (a task's gpuplan writes nothing after its run.end; a requeued run starts with a
 * run.start), and a file of gigabytes is not read whole for it.
 */
const ENDING_TAIL_BYTES = 16 * 1024 * 1024;

/** The end of a task's events file (`JOB_TASK.jsonl`); "" where it is not a regular file to read. */
function readEventsTail(runDir: string, file: string): string {
  const text = readTaskText(runDir, join("events", file), { maxBytes: ENDING_TAIL_BYTES, tail: true });
  return typeof text === "string" ? text : "";
}

const ENDINGS: ReadonlySet<unknown> = new Set<PipelineEnding>(["ok", "failed", "interrupted"]);
const ISO_TIME = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?Z$/;

/**
 * The file's last run.end; a task's file is outside text: any other status is no ending. A run.start
 * after it is the task run again (Slurm requeued it: preempted, its node failed), which records on
 * in the same file and has not ended yet: no ending.
 */
function lastRunEnd(text: string): TaskEnd | null {
  let end: TaskEnd | null = null;
  for (const line of text.split("\n")) {
    if (!line.includes('"run.end"') && !line.includes('"run.start"')) continue;
    try {
      const e: unknown = JSON.parse(line);
      if (typeof e !== "object" || e === null) continue;
      const { event, status, ts } = e as { event?: unknown; status?: unknown; ts?: unknown };
      if (event === "run.start") end = null;
      else if (event === "run.end" && ENDINGS.has(status))
        end = {
          status: status as PipelineEnding,
          ts: typeof ts === "string" && ISO_TIME.test(ts) && Number.isFinite(Date.parse(ts)) ? ts : null,
        };
    } catch {}
  }
  return end;
}
