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
import { readFileSync } from "node:fs";
import { lstat, mkdir, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { writeFileAtomic } from "../../plan/write-atomic.js";
import { UsageError } from "../../problems/errors.js";
import { fileError } from "../../problems/file-errors.js";

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
const jobsFile = (runDir: string): string => join(slurmDir(runDir), "jobs.json");
export const taskJournalDir = (runDir: string): string => join(slurmDir(runDir), "journals");
/** A task's own journal and events in the run folder; `task` is `JOB_TASK`. */
export const taskJournalPath = (runDir: string, task: string): string =>
  join(taskJournalDir(runDir), `${task}.jsonl`);
export const taskEventsPath = (runDir: string, task: string): string =>
  join(slurmDir(runDir), "events", `${task}.jsonl`);

export async function makeSlurmDirs(runDir: string): Promise<void> {
  // gpuplan writes its scripts and records here at paths it chose: a link planted in the run
  // folder (slurm -> ~/bin) would put them where the link points. None is followed.
  for (const d of ["", "logs", "events", "started", "journals"]) {
    const path = join(slurmDir(runDir), d);
    if ((await lstat(path).catch(() => null))?.isSymbolicLink())
      throw new UsageError(
        `cannot write the run's Slurm records: ${path} is a symbolic link, and gpuplan follows none in a run folder`,
        "unwritable-file",
        "replace the link with a real folder (someone who could write in the run folder may have planted it)",
      );
    await mkdir(path, { recursive: true });
  }
}

/**
 * The run's submitted arrays (none before the first submission). A record that is not the one
 * gpuplan wrote (a hand edit, a damaged disk) is said to be damaged, naming the file: squeue,
 * status and --resume cannot know the run's jobs without it.
 */
export async function readSlurmRecord(runDir: string): Promise<SlurmRunRecord> {
  const file = jobsFile(runDir);
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return { schema: "gpuplan/slurm-run@1", arrays: [] };
    throw fileError(e, file, "read", "file");
  }
  const data = parseSlurmRecord(text);
  if (!data)
    throw new UsageError(
      `${file} is damaged: it is not the list of the run's Slurm job arrays gpuplan wrote`,
      "damaged-run",
      "restore the file (each array's job id, script and pipelines), or start a new run",
    );
  return data;
}

/** slurm/jobs.json's text as the record gpuplan wrote, or null when it is not that (outside text). */
export function parseSlurmRecord(text: string): SlurmRunRecord | null {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch {
    return null;
  }
  return isSlurmRecord(data) ? data : null;
}

const isStrings = (v: unknown): boolean => Array.isArray(v) && v.every((x) => typeof x === "string");

function isSlurmRecord(data: unknown): data is SlurmRunRecord {
  if (typeof data !== "object" || data === null || !("arrays" in data) || !Array.isArray(data.arrays))
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

export async function recordArrays(runDir: string, arrays: readonly SubmittedArray[]): Promise<void> {
  const record = await readSlurmRecord(runDir);
  record.arrays.push(...arrays);
  await writeFileAtomic(
    jobsFile(runDir),
    `${JSON.stringify(record, null, 2)}\n`,
    "file",
    undefined,
    "chosen",
  );
}

/** The marker a task wrote when it started: `HOST GPUS`, or null while there is none. */
export function readStartMarker(runDir: string, task: string): { node: string; gpus: string | null } | null {
  try {
    const [node = "", gpus = ""] = readFileSync(join(slurmDir(runDir), "started", task), "utf8")
      .trim()
      .split(/\s+/);
    return { node, gpus: gpus === "" ? null : gpus };
  } catch {
    return null;
  }
}

export type PipelineEnding = "ok" | "failed" | "interrupted";

/**
 * How each pipeline's latest task ended by its own account (the `run.end` of its events file);
 * pipelines whose latest task never wrote one are missing, even where an earlier task (before a
 * resume) did.
 */
export async function taskEndings(runDir: string): Promise<Map<string, PipelineEnding>> {
  const ends = await taskEnds(runDir);
  return new Map([...ends].map(([pipeline, end]) => [pipeline, end.status]));
}

export interface TaskEnd {
  status: PipelineEnding;
  /** The run.end's own time (ISO 8601), where it said one that reads as a time. */
  ts: string | null;
}

/** taskEndings, with when each task said it ended. */
export async function taskEnds(runDir: string): Promise<Map<string, TaskEnd>> {
  const record = await readSlurmRecord(runDir);
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
      const text = await readFile(join(slurmDir(runDir), "events", file), "utf8").catch(() => "");
      const end = lastRunEnd(text);
      if (end) endings.set(pipeline, end);
      else endings.delete(pipeline);
    }
  }
  return endings;
}

/** Whether the task (`JOB_TASK`) wrote its run.end: it ended by its own account. */
export async function hasTaskEnded(runDir: string, task: string): Promise<boolean> {
  const text = await readFile(taskEventsPath(runDir, task), "utf8").catch(() => "");
  return lastRunEnd(text) !== null;
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
