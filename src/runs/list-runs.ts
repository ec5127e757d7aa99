/**
 * The runs in the runs folder, each summed up from its journal (the record `--resume` trusts):
 * how it stands over every pipeline it covers (not only those its last session ran), its steps' outcomes, how long it took, whether it can be resumed,
 * and what it takes on disk. Cheap: a plan's name is read from the first lines of its plan.json,
 * never the whole plan. Nothing read here is trusted for display; the CLI escapes it.
 */

import { lstat, open, readdir, readFile } from "node:fs/promises";
import { join } from "node:path";
import { setTimeout as delay } from "node:timers/promises";
import { errnoOf, fileError } from "../problems/file-errors.js";
import { kindOf } from "../run/record/read-run-file.js";
import type { RunListing, RunStatus } from "../schema-types/runs.js";
import { describeOpenSubmission, openSbatchCalls } from "../slurm/follow/sbatch-calls.js";
import { slurmFolderDamage, slurmRecordFile } from "../slurm/follow/slurm-folder.js";
import { describeSubmitFailure, submitFailureOf } from "../slurm/follow/submit-failure.js";
import type { RunCommand } from "../slurm/read-cluster.js";
import { forEachLine } from "../text/each-line.js";
import { shellWord } from "../text/shell-word.js";
import { byNewest, isRunId, noRunsFolder, runStartMs } from "./run-order.js";
import { utcTimestamp } from "./utc-timestamp.js";

export type { RunListing } from "../schema-types/runs.js";

/** Says whether a gpuplan process holds the run now (the run-level lock); absent: gpuplan cannot tell. */
export type RunInUse = (runDir: string) => Promise<boolean>;

/**
 * Runs read at once: each holds a file or two open (its plan, its journal, a folder being sized),
 * so thousands of runs read together ran out of file descriptors (EMFILE at `ulimit -n 1024`) and
 * healthy runs were listed as damaged.
 */
const RUNS_AT_ONCE = 8;

/**
 * Runs newest first (by when they started); folders that are not runs (other names, symlinks,
 * files) are left out. Out of file descriptors even so (another program's share, a tiny ulimit)
 * is an error naming the cause, never a run said to be damaged. `slurm` answers for the Slurm
 * runs no gpuplan follows whose tasks have not all said how they ended; without it they are
 * `submitted`.
 */
/**
 * `slurmHere`: whether Slurm's client commands are on this machine; where they are not (a run
 * folder copied to a workstation), a Slurm run's resume is offered here (`--executor local`).
 */
export async function listRuns(
  runsDir: string,
  inUse?: RunInUse,
  slurm?: RunCommand,
  slurmHere = true,
): Promise<RunListing[]> {
  const entries = await fdRetry(runsDir, () => readdir(runsDir, { withFileTypes: true })).catch(
    (e: unknown) => (e instanceof OutOfFds ? Promise.reject(e.error) : noRunsFolder(e, runsDir)),
  );
  const ids = entries
    .filter((e) => e.isDirectory() && isRunId(e.name))
    .map((e) => e.name)
    .sort()
    .reverse();
  const runs: RunListing[] = new Array(ids.length);
  let next = 0;
  let failed = false;
  const reader = async () => {
    for (let i = next++; i < ids.length && !failed; i = next++) {
      try {
        const dir = join(runsDir, ids[i]!);
        runs[i] = {
          ...(await describeRun(dir, ids[i]!, inUse, slurm, slurmHere)),
          bytes: await folderBytes(dir),
        };
      } catch (e) {
        failed = true;
        throw e;
      }
    }
  };
  // Every reader settled before an error goes up: the files they hold are closed by then, and
  // saying the error (a module loaded for it) needs a descriptor too.
  const settled = await Promise.allSettled(
    Array.from({ length: Math.min(RUNS_AT_ONCE, ids.length) }, reader),
  );
  const failure = settled.find((r) => r.status === "rejected");
  if (failure) throw failure.reason instanceof OutOfFds ? failure.reason.error : failure.reason;
  return newestFirst(runs);
}

/** The runs newest first by when they started (run-order.ts: the order report's newest run agrees with). */
async function newestFirst(runs: RunListing[]): Promise<RunListing[]> {
  const keyed = await Promise.all(
    runs.map(async (r) => ({ r, id: r.id, start: await runStartMs(r.dir, r.id, r.startedAt) })),
  );
  return keyed.sort(byNewest).map((k) => k.r);
}

const isFdLimit = (e: unknown): boolean => {
  const code = errnoOf(e);
  return code === "EMFILE" || code === "ENFILE";
};

/**
 * `read` again while the process (or the system) is out of file descriptors, a few times over a
 * second, as others close; then the `unreadable-file` error that says so (too many open files),
 * which every caller lets through.
 */
async function fdRetry<T>(path: string, read: () => Promise<T>): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await read();
    } catch (e) {
      if (!isFdLimit(e)) throw e;
      if (attempt >= 5) throw new OutOfFds(fileError(e, path, "read", "a run's file"));
      await delay(25 << attempt);
    }
  }
}

/** Carries the error to say through the callers' catch-alls (each of which lets it through). */
class OutOfFds extends Error {
  constructor(readonly error: Error) {
    super(error.message);
  }
}

interface JournalLine {
  type?: unknown;
  [key: string]: unknown;
}

/**
 * How the run in `dir` (named `id`) stands, as `gpuplan runs` lists it, less its size on disk (a
 * walk of its folder, which only the listing wants): also `gpuplan report`'s status of a run that
 * went to Slurm, so that the two never disagree.
 */
export async function describeRun(
  dir: string,
  id: string,
  inUse?: RunInUse,
  slurm?: RunCommand,
  slurmHere = true,
): Promise<Omit<RunListing, "bytes">> {
  const base: Omit<RunListing, "bytes"> = {
    id,
    dir,
    plan: await planName(join(dir, "plan.json")),
    input: null,
    startedAt: null,
    endedAt: null,
    wallMs: null,
    status: "damaged",
    sessions: 0,
    ok: 0,
    failed: 0,
    skipped: 0,
    resumable: false,
    resume: null,
    problem: null,
  };
  const lines = await journalLines(join(dir, "journal.jsonl"));
  if (typeof lines === "string") return { ...base, problem: lines };
  const header = lines[0];
  if (header?.type !== "run" || typeof header.startedAt !== "string" || typeof header.input !== "string")
    return { ...base, problem: "its journal does not start with a run header" };
  const lock = await lockFileProblem(join(dir, "run.lock"));
  if (lock !== null) return { ...base, problem: lock };
  // Read as no Slurm records, a detached run whose tasks may still be in Slurm was listed as a
  // local one gpuplan was stopped in, and offered a resume (which refuses it as damaged-run).
  const slurmDamage = slurmFolderDamage(dir);
  if (slurmDamage !== null)
    return {
      ...base,
      problem: `its slurm/ is damaged: ${slurmDamage}; gpuplan cannot tell where its Slurm jobs are, and it cannot be resumed`,
    };
  const ends = lines.filter((l) => l.type === "end");
  // A submission's sbatch calls after the last end are a session that has not ended (a detached
  // resume, or one gpuplan was stopped in).
  const lastEnd = lines.findLast((l) => l.type === "end" || l.type === "step" || l.type === "sbatch");
  const ended = lastEnd?.type === "end";
  const running = inUse
    ? await fdRetry(join(dir, "run.lock"), () => inUse(dir)).catch((e: unknown) =>
        e instanceof OutOfFds ? Promise.reject(e) : false,
      )
    : false;
  const jobs = await lstat(slurmRecordFile(dir)).catch(() => null);
  const onSlurm = jobs !== null;
  // slurm/ with no jobs.json: a submission no record names (it failed, or gpuplan was stopped in
  // it) — a Slurm run all the same, which `--resume` without `--executor` would run here.
  const toSlurm = onSlurm || (await lstat(join(dir, "slurm")).catch(() => null))?.isDirectory() === true;
  // A Slurm run resumes on Slurm, but only where Slurm is: offered `--executor slurm` on a
  // workstation, the resume would fail (slurm-not-found); `--executor local` runs what is left here.
  const executor = toSlurm ? (slurmHere ? " --executor slurm" : " --executor local") : "";
  const resumeCommand = `gpuplan run ${shellWord(header.input)} --resume ${id}${executor}`;
  const hasPlan = base.plan !== null;
  // Only a real UTC time is shown (and counted into the wall time): the journal is outside text.
  const startedAt = utcTimestamp(header.startedAt);
  const started = { input: header.input, startedAt };
  // sbatch calls no record accounts for: arrays may be in Slurm that slurm/jobs.json does not
  // name, which neither the tasks' accounts nor the journal can say (sbatch-calls.ts).
  const open = toSlurm && !running ? openSbatchCalls(lines) : [];
  const unrecorded = open.length > 0 ? describeOpenSubmission(open, id) : null;
  // A Slurm run no gpuplan follows: detached, its follower killed, an exported array's. Its journal
  // has no end after its last submission (slurm/jobs.json is written before a follower's steps
  // and end, and after a detached resume's), so its tasks' own accounts say how it stands.
  if (onSlurm && !running && !(ended && (await journalIsNewer(dir, jobs.mtimeMs)))) {
    const { readSlurmRunStanding } = await import("../slurm/follow/run-standing.js");
    const pipelines = Array.isArray(header.pipelines)
      ? header.pipelines.filter((p): p is string => typeof p === "string")
      : [];
    const standing = await readSlurmRunStanding(dir, id, pipelines, slurm);
    const endedAt = standing.status === "submitted" ? null : utcTimestamp(standing.endedAt);
    const wallMs = endedAt && startedAt ? Date.parse(endedAt) - Date.parse(startedAt) : Number.NaN;
    // A resume asks Slurm first and is refused where it is asked in vain: no offer then either.
    const couldResume =
      standing.status !== "ok" &&
      standing.status !== "damaged" &&
      !standing.active &&
      !standing.unanswered &&
      hasPlan;
    const changed = couldResume && (await planChanged(dir, header.planSha256));
    const resumable = couldResume && !changed;
    return {
      ...base,
      ...started,
      endedAt,
      wallMs: Number.isFinite(wallMs) ? Math.max(0, wallMs) : null,
      status: standing.status,
      // The detached session (or the killed follower's) never ended in the journal.
      sessions: ends.length + 1,
      ...stepCounts([...lines, ...(await taskJournalLines(dir))]),
      resumable,
      resume: resumable ? resumeCommand : null,
      problem: changed
        ? PLAN_CHANGED
        : (unrecorded ??
          standing.problem ??
          (!hasPlan && standing.status !== "ok"
            ? "its plan.json is missing or not a plan: it cannot be resumed"
            : null)),
    };
  }
  const counts = ended ? countsOf(lastEnd!) : stepCounts(lines);
  const submitFailed = toSlurm && !onSlurm ? submitFailureOf(lines) : null;
  let status: RunStatus = onSlurm ? "submitted" : "unfinished";
  if (running) status = "running";
  else if (submitFailed) status = "failed";
  else if (ended)
    status =
      unfinishedPipelines(lines, header.pipelines).size > 0
        ? "interrupted"
        : counts.failed > 0 || stepCounts(lines).failed > 0
          ? "failed"
          : "ok";
  const endedAt = ended ? utcTimestamp(lastEnd!.ts) : null;
  const wallMs = endedAt && startedAt ? Math.max(0, Date.parse(endedAt) - Date.parse(startedAt)) : null;
  // Arrays of a failed submission that may still be in Slurm are in no record a resume checks.
  const couldResume = !running && status !== "ok" && hasPlan && !submitFailed?.mayRun;
  const changed = couldResume && (await planChanged(dir, header.planSha256));
  const resumable = couldResume && !changed;
  return {
    ...base,
    ...started,
    endedAt,
    wallMs: Number.isFinite(wallMs) ? wallMs : null,
    status,
    sessions: ends.length + (ended ? 0 : 1),
    ...counts,
    resumable,
    resume: resumable ? resumeCommand : null,
    problem: changed
      ? PLAN_CHANGED
      : submitFailed && !running
        ? describeSubmitFailure(submitFailed)
        : unrecorded !== null
          ? unrecorded
          : status === "submitted"
            ? `its pipelines were submitted to Slurm and no gpuplan follows them: gpuplan status ${id} says where its jobs are`
            : status === "unfinished"
              ? inUse
                ? "it never ended: gpuplan was stopped (kill -9, a crash, a reboot)"
                : "it never ended: gpuplan was stopped, or still runs"
              : !hasPlan && status !== "ok"
                ? "its plan.json is missing or not a plan: it cannot be resumed"
                : null,
  };
}

const PLAN_CHANGED =
  "its plan.json is not the plan it started with (changed since: its SHA-256 is not the one its journal recorded): it cannot be resumed";

/**
 * Whether the run's plan.json is not the one its journal's header recorded (planSha256), which
 * run --resume refuses (resume-plan-changed). Asked only of a run that could otherwise be resumed;
 * one that recorded none (an older gpuplan's) cannot be told, and resumes with a warning.
 */
async function planChanged(dir: string, recorded: unknown): Promise<boolean> {
  if (typeof recorded !== "string") return false;
  const path = join(dir, "plan.json");
  const bytes = await fdRetry(path, () => readFile(path)).catch((e: unknown) =>
    e instanceof OutOfFds ? Promise.reject(e) : null,
  );
  // Unreadable since its name was read: the resume will say why.
  if (bytes === null) return false;
  const { planDigest } = await import("../run/record/plan-digest.js");
  return planDigest(bytes) !== recorded;
}

/** Whether the run's journal was written after `mtimeMs` (its slurm/jobs.json's). */
async function journalIsNewer(dir: string, mtimeMs: number): Promise<boolean> {
  const journal = await lstat(join(dir, "journal.jsonl")).catch(() => null);
  return journal !== null && journal.mtimeMs >= mtimeMs;
}

/**
 * The lines of a Slurm run's task journals (slurm/journals/JOB_TASK.jsonl: each task's own steps),
 * arrays in submission order (job ids grow), so a later attempt's step comes last.
 */
async function taskJournalLines(dir: string): Promise<JournalLine[]> {
  const journals = join(dir, "slurm", "journals");
  const files = await fdRetry(journals, () => readdir(journals)).catch((e: unknown) =>
    e instanceof OutOfFds ? Promise.reject(e) : ([] as string[]),
  );
  const tasks = files
    .map((f) => /^([0-9]+)_([0-9]+)\.jsonl$/.exec(f))
    .filter((m) => m !== null)
    .sort((a, b) => compareDigits(a[1]!, b[1]!) || compareDigits(a[2]!, b[2]!));
  const lines: JournalLine[] = [];
  for (const m of tasks) {
    const read = await journalLines(join(journals, m[0]));
    if (typeof read !== "string") lines.push(...read);
  }
  return lines;
}

/** Decimal numbers compared as numbers, however long (a job id is outside text). */
const compareDigits = (a: string, b: string): number => {
  const x = a.replace(/^0+/, "");
  const y = b.replace(/^0+/, "");
  return x.length - y.length || (x < y ? -1 : x > y ? 1 : 0);
};

/**
 * The run's pipelines (its header's) whose last session to run them was interrupted. A resume
 * with `--pipeline` runs some of them: its ending ok says nothing of the others, which an
 * earlier interrupt left unfinished — the run is not done, and can be resumed.
 */
function unfinishedPipelines(lines: readonly JournalLine[], covered: unknown): Set<string> {
  const all = Array.isArray(covered) ? covered.filter((p): p is string => typeof p === "string") : [];
  const unfinished = new Set<string>();
  for (const l of lines) {
    if (l.type !== "end") continue;
    // An end of an older gpuplan does not say: its session ran them all.
    const ran = Array.isArray(l.pipelines) ? l.pipelines.filter((p) => typeof p === "string") : all;
    for (const p of ran) {
      if (l.interrupted === true) unfinished.add(p);
      else unfinished.delete(p);
    }
  }
  return unfinished;
}

function countsOf(end: JournalLine): { ok: number; failed: number; skipped: number } {
  const n = (v: unknown) => (Number.isInteger(v) && (v as number) >= 0 ? (v as number) : 0);
  return { ok: n(end.ok), failed: n(end.failed), skipped: n(end.skipped) };
}

/** A run that never ended: each step's last journaled attempt. */
function stepCounts(lines: readonly JournalLine[]): { ok: number; failed: number; skipped: number } {
  const last = new Map<string, unknown>();
  for (const l of lines)
    if (l.type === "step" && typeof l.pipeline === "string" && typeof l.step === "string")
      last.set(`${l.pipeline}\u0000${l.step}`, l.status);
  let ok = 0;
  let failed = 0;
  let skipped = 0;
  for (const status of last.values()) {
    if (status === "ok") ok++;
    else if (status === "skipped") skipped++;
    else if (status !== "interrupted") failed++;
  }
  return { ok, failed, skipped };
}

/**
 * Why the run's run.lock is not one gpuplan made (a FIFO, a device, a link in its place: a resume
 * refuses the folder as damaged-run); null when it is a regular file or absent (a run from before
 * run.lock). Asked with lstat, which never opens the file: a FIFO would wait for a writer.
 */
async function lockFileProblem(path: string): Promise<string | null> {
  const info = await lstat(path).catch(() => null);
  if (info === null || info.isFile()) return null;
  return `its run.lock is ${kindOf(info)}, not a regular file: it cannot be resumed`;
}

/** The journal's lines (a torn last line left out), or why it cannot be read. */
async function journalLines(path: string): Promise<JournalLine[] | string> {
  const info = await lstat(path).catch(() => null);
  if (!info) return "it has no journal.jsonl";
  // A FIFO or a device would block or never end: only a regular file is read.
  if (!info.isFile()) return "its journal.jsonl is not a regular file";
  const text = await fdRetry(path, () => readFile(path, "utf8")).catch((e: NodeJS.ErrnoException) =>
    e instanceof OutOfFds ? Promise.reject(e) : e,
  );
  if (text instanceof Error) return `its journal.jsonl cannot be read (${text.code ?? text.message})`;
  const lines: JournalLine[] = [];
  forEachLine(text, (line) => {
    if (line.trim() === "") return;
    try {
      const v = JSON.parse(line) as unknown;
      if (typeof v === "object" && v !== null && !Array.isArray(v)) lines.push(v as JournalLine);
    } catch {
      // A torn line (a crash mid-write): what follows it was never acknowledged.
    }
  });
  return lines;
}

/** The plan's name from the start of its plan.json (compile writes `name` among the first keys). */
async function planName(path: string): Promise<string | null> {
  const info = await lstat(path).catch(() => null);
  if (!info?.isFile()) return null;
  const handle = await fdRetry(path, () => open(path, "r")).catch((e: unknown) =>
    e instanceof OutOfFds ? Promise.reject(e) : null,
  );
  if (!handle) return null;
  try {
    const buffer = Buffer.alloc(Math.min(4096, info.size));
    await handle.read(buffer, 0, buffer.length, 0);
    return topLevelName(buffer.toString("utf8"));
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}

/**
 * The string value of the top-level `"name"` key in the start of a JSON object, however it is laid
 * out (compile's indented plan, or one written compact by hand or a tool): strings are skipped
 * whole and depth is counted, so a nested `name` or a `"name"` inside a string never answers.
 */
function topLevelName(text: string): string | null {
  const string = /"(?:[^"\\]|\\.)*"/y;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "{" || c === "[") depth++;
    else if (c === "}" || c === "]") depth--;
    else if (c === '"') {
      string.lastIndex = i;
      const key = string.exec(text);
      if (!key) return null; // Cut off inside a string: the name is past what was read.
      i = string.lastIndex - 1;
      if (depth !== 1 || key[0] !== '"name"') continue;
      const value = /\s*:\s*("(?:[^"\\]|\\.)*")/y;
      value.lastIndex = string.lastIndex;
      const m = value.exec(text);
      if (!m) continue; // A value named "name", not a key.
      const name = JSON.parse(m[1]!) as unknown;
      return typeof name === "string" ? name : null;
    }
  }
  return null;
}

/** The sizes of the files under `dir` (symlinks counted as links, not followed). */
async function folderBytes(dir: string): Promise<number> {
  let total = 0;
  const entries = await fdRetry(dir, () => readdir(dir, { withFileTypes: true })).catch((e: unknown) =>
    e instanceof OutOfFds ? Promise.reject(e) : [],
  );
  for (const e of entries) {
    const path = join(dir, e.name);
    if (e.isDirectory()) total += await folderBytes(path);
    else total += (await lstat(path).catch(() => null))?.size ?? 0;
  }
  return total;
}
