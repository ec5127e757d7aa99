/**
 * `gpuplan runs --prune --keep N`: remove run folders beyond the N newest, never one that may be
 * in use. A run a gpuplan process holds (the run-level lock, when gpuplan can ask it) is kept; so
 * is a run that never ended when gpuplan cannot ask (it may still be running), and a Slurm run
 * unless Slurm says all its jobs ended (no gpuplan holds a detached one: its tasks run on other
 * nodes, writing into its folder). Only real run folders directly in the runs folder are removed:
 * a symlink named like a run is not followed.
 */
import { lstat, rm } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf } from "../problems/file-errors.js";
import { readJournal } from "../run/record/journal.js";
import type { PruneResult } from "../schema-types/runs.js";
import { openSbatchCalls } from "../slurm/follow/sbatch-calls.js";
import { slurmFolderDamage, slurmRecordFile } from "../slurm/follow/slurm-folder.js";
import { submitFailureOf } from "../slurm/follow/submit-failure.js";
import type { RunInUse, RunListing } from "./list-runs.js";

/** A run folder changed this recently may be a run starting (its journal not written yet). */
const STARTING_MS = 10 * 60_000;

/** Why a Slurm run's jobs may still be queued or running; null when Slurm says they all ended. */
type SlurmJobsMayRun = (runDir: string) => Promise<string | null>;

export interface PruneOptions {
  /** The run-level lock; absent: gpuplan cannot ask it. */
  inUse?: RunInUse;
  /** Slurm, for runs with jobs recorded; absent: every such run is kept. */
  slurmJobsMayRun?: SlurmJobsMayRun;
  now?: () => number;
}

export async function pruneRuns(
  runs: readonly RunListing[],
  keep: number,
  options: PruneOptions = {},
): Promise<PruneResult> {
  const { inUse, slurmJobsMayRun, now = Date.now } = options;
  const result: PruneResult = { keep, removed: [], inUse: [], reasons: [], errors: [] };
  // `runs` is newest first: everything after the first `keep` goes, unless it may be in use.
  for (const run of runs.slice(keep)) {
    const info = await lstat(run.dir).catch(() => null);
    if (!info?.isDirectory()) {
      result.errors.push({ id: run.id, error: "not a directory (any more)" });
      continue;
    }
    if (run.status === "running" || (await mayBeInUse(run, info.mtimeMs, now(), inUse))) {
      result.inUse.push(run.id);
      continue;
    }
    // Asked of the folder now, not of the listing: a run submitted since it was read counts too.
    const slurmReason = await whySlurmRunMayRun(run.dir, slurmJobsMayRun);
    if (slurmReason !== null) {
      result.inUse.push(run.id);
      result.reasons.push({ id: run.id, reason: slurmReason });
      continue;
    }
    try {
      await rm(run.dir, { recursive: true });
      result.removed.push(run.id);
    } catch (e) {
      const err = e as NodeJS.ErrnoException;
      result.errors.push({ id: run.id, error: err.code ?? err.message });
    }
  }
  return result;
}

/**
 * Whether the run may be in use: a damaged folder changed in the last minutes (a run starting has
 * its folder before its lock and journal, lock or no lock); then what the run-level lock says,
 * when gpuplan can ask it; without it, a run that never ended (it may still be running).
 */
async function mayBeInUse(
  run: RunListing,
  mtimeMs: number,
  nowMs: number,
  inUse?: RunInUse,
): Promise<boolean> {
  if (run.status === "damaged" && nowMs - mtimeMs < STARTING_MS) return true;
  if (inUse) return inUse(run.dir).catch(() => true);
  return run.status === "unfinished" || run.status === "submitted";
}

/** Why a run with Slurm jobs recorded may not be removed yet; null for a run with none, or all ended. */
async function whySlurmRunMayRun(runDir: string, ask?: SlurmJobsMayRun): Promise<string | null> {
  // A file, FIFO or link at slurm/ hides jobs.json (ENOTDIR): read as "no Slurm jobs", a detached
  // run whose tasks were still writing into its folder was removed once ten minutes old.
  const damage = slurmFolderDamage(runDir);
  if (damage !== null)
    return `its slurm/ is damaged: ${damage}; gpuplan cannot tell whether its Slurm jobs ended`;
  // Arrays no record names write into the folder all the same, whatever Slurm says of the others.
  const unrecorded = await unrecordedMayRun(runDir);
  if (unrecorded !== null) return unrecorded;
  // Only a record that is not there makes a run with no Slurm jobs; one gpuplan cannot look at
  // (EACCES) may name jobs still running.
  const lookError = await lstat(slurmRecordFile(runDir)).then(
    () => null,
    (e: unknown) => errnoOf(e) ?? String(e),
  );
  if (lookError === "ENOENT") return null;
  if (lookError !== null)
    return `gpuplan cannot look at its slurm/jobs.json (${lookError}), so it cannot tell whether its Slurm jobs ended`;
  if (!ask) return "it ran on Slurm, and gpuplan cannot ask Slurm here whether its jobs ended";
  return ask(runDir).catch(
    (e: unknown) =>
      `asking Slurm whether its jobs ended failed (${e instanceof Error ? e.message : String(e)})`,
  );
}

/**
 * Why arrays no record names may be in Slurm, or null: a submission that failed with arrays
 * scancel may not have stopped (submit-failure.ts), or one gpuplan was stopped in, its sbatch
 * calls never settled (sbatch-calls.ts). Their tasks write into this folder. Only a run with a
 * slurm/ folder submitted anything: a local run's journal is not read.
 */
async function unrecordedMayRun(runDir: string): Promise<string | null> {
  if (!(await lstat(join(runDir, "slurm")).catch(() => null))?.isDirectory()) return null;
  const { entries } = await readJournal(runDir).catch(() => ({ entries: [] as unknown[] }));
  if (submitFailureOf(entries)?.mayRun === true)
    return "its submission to Slurm failed and arrays of it may still be queued or running (scancel failed, or sbatch's answer was lost): find them with squeue --me first";
  return openSbatchCalls(entries).length > 0
    ? "gpuplan was stopped while it submitted the run to Slurm, and an array of it may be queued or running under an id slurm/jobs.json does not name: resume it (gpuplan run --resume RUN --executor slurm looks for it first), or find it with squeue --me -o '%F %o'"
    : null;
}
