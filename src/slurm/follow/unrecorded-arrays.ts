/**
 * Arrays a submission may have queued that slurm/jobs.json does not name: gpuplan killed (kill -9,
 * a lost login node) between an sbatch answering and the record naming its job id, or during the
 * sbatch itself. The session records each array as soon as its sbatch answers, and writes an
 * `sbatch` entry to the run's journal before each call; `sbatch` entries after the journal's last
 * `recorded` entry are calls no record accounts for. A resume asks Slurm for such arrays by their
 * batch script's path — the run's own slurm/ folder, unique to the run, where job names
 * (`gpuplan-PLAN-N`) are shared by every run of the plan — and records what it finds, so that the
 * usual check (refuseWhileActive) refuses while they run; where Slurm cannot answer, it refuses.
 */
import { readdirSync, readFileSync } from "node:fs";
import { basename } from "node:path";
import { UsageError, VendorError } from "../../problems/errors.js";
import { shellWord } from "../../text/shell-word.js";
import { type RunCommand, slurmOutput } from "../read-cluster.js";
import type { SubmittedArray } from "./run-record.js";
import type { SbatchCall } from "./sbatch-calls.js";

/**
 * squeue's arguments: every job of the user's Slurm still holds (pending, running, completing),
 * each as its array's job id and its command — the batch script's path, then its arguments
 * (`/…/slurm/01-cpu.sbatch GPUPLAN_KILL_GRACE=30s`, as Slurm 22.05 prints `%o`).
 */
function unrecordedSqueueArgs(): string[] {
  // `--user UID` rather than `--me`, which Slurm before 20.11 refuses (an invalid option: the
  // resume would stop on every such cluster); squeue takes a user id as well as a name.
  return ["--user", String(process.getuid?.() ?? ""), "-h", "-o", "%F|%o"];
}

/**
 * The arrays squeue lists whose batch script is one of `calls`' (the last call of a path: a resume
 * writes its scripts anew under the same names) and whose job id `recorded` does not name. Throws
 * where squeue cannot answer (not on PATH, failed, past its time limit), saying what to run.
 */
export async function findUnrecordedArrays(
  slurm: RunCommand,
  calls: readonly SbatchCall[],
  recorded: readonly SubmittedArray[],
  run: { id: string; journal: string },
): Promise<SubmittedArray[]> {
  const last = calls.at(-1);
  if (last === undefined) return [];
  // An sbatch that gpuplan left running as it was killed may queue its array after squeue answers.
  const submitting = sbatchStillRunning(calls.map((c) => c.path));
  if (submitting !== null) throw stillSubmitting(submitting, run);
  let text: string;
  try {
    text = await slurmOutput(slurm, "squeue", unrecordedSqueueArgs());
  } catch (e) {
    throw unanswered(e, last, calls, run);
  }
  const known = new Set(recorded.map((a) => a.job));
  const byPath = new Map(calls.map((c) => [c.path, c]));
  const found = new Map<string, SubmittedArray>();
  for (const [path, call] of byPath)
    for (const job of jobsOf(text, path))
      if (!known.has(job) && !found.has(job))
        found.set(job, { job, script: call.script, pipelines: [...call.pipelines] });
  return [...found.values()];
}

/**
 * The job ids of the lines `JOB|PATH` or `JOB|PATH ARGS…` in squeue's answer. Searched for the
 * path rather than split into lines first: a folder's name may hold a newline, or a `|`.
 */
function jobsOf(text: string, path: string): string[] {
  const jobs: string[] = [];
  const needle = `|${path}`;
  for (let at = text.indexOf(needle); at !== -1; at = text.indexOf(needle, at + 1)) {
    const after = text[at + needle.length];
    if (after !== undefined && after !== " " && after !== "\n") continue;
    const job = text.slice(text.lastIndexOf("\n", at - 1) + 1, at).trim();
    if (/^[0-9]+$/.test(job)) jobs.push(job);
  }
  return jobs;
}

/** What a resume says where squeue could not be asked for the arrays: nothing is submitted. */
function unanswered(
  e: unknown,
  last: SbatchCall,
  calls: readonly SbatchCall[],
  run: { id: string; journal: string },
): unknown {
  if (!(e instanceof VendorError || e instanceof UsageError)) return e;
  const folder = last.path.slice(0, last.path.length - last.script.length);
  const message = `--resume: gpuplan was stopped while it submitted run ${run.id} to Slurm (${run.journal} says sbatch was called for ${calls.map((c) => c.script).join(", ")}, last at ${last.ts}, and slurm/jobs.json does not name what it queued), and ${e.message}: gpuplan cannot tell whether such an array is queued or running, so it resumes nothing`;
  const hint = `look for it with squeue --me -o '%F %o' | grep -F ${shellWord(folder)}, and scancel it or wait for it to end; then resume again once squeue answers`;
  return e instanceof VendorError
    ? new VendorError(message, e.code, e.call, e.vendorMessage, hint)
    : new UsageError(message, e.code, hint);
}

/**
 * A process on this machine that is an sbatch (its program, or the script a wrapper runs, named
 * `sbatch`) of one of `paths`: the call of a gpuplan killed while it waited for sbatch, which the
 * kill did not reach (gpuplan's children are not in a group of their own). It may yet queue its
 * array — after squeue has answered that none is there. Read from /proc (none elsewhere: null).
 */
function sbatchStillRunning(paths: readonly string[], proc = "/proc"): { pid: number; path: string } | null {
  let pids: string[];
  try {
    pids = readdirSync(proc).filter((name) => /^[0-9]+$/.test(name) && Number(name) !== process.pid);
  } catch {
    return null;
  }
  const wanted = new Set(paths);
  for (const pid of pids) {
    let argv: string[];
    try {
      argv = readFileSync(`${proc}/${pid}/cmdline`, "utf8").split("\0");
    } catch {
      continue;
    }
    // sbatch itself, or `sh …/sbatch` (a site's wrapper script); the script is an argument after it.
    const at = argv.slice(0, 2).findIndex((arg) => basename(arg) === "sbatch");
    if (at === -1) continue;
    const path = argv.slice(at + 1).find((arg) => wanted.has(arg));
    if (path !== undefined) return { pid: Number(pid), path };
  }
  return null;
}

/** What a resume says while such an sbatch runs: nothing is submitted. */
function stillSubmitting(
  submitting: { pid: number; path: string },
  run: { id: string; journal: string },
): UsageError {
  return new UsageError(
    `--resume: an sbatch of run ${run.id} is still running on this machine (pid ${submitting.pid}, for ${submitting.path}), left by the gpuplan that was stopped while it submitted the run: it may yet queue its array, which squeue cannot show before it does, so gpuplan resumes nothing`,
    "slurm-run-active",
    `wait for it to end (ps -p ${submitting.pid}), or kill it; then resume again`,
  );
}
