/**
 * `gpuplan runs --prune --keep N`: remove run folders beyond the N newest, never one that may be
 * in use. A run a gpuplan process holds (the run-level lock, when gpuplan can ask it) is kept; so
 * is a run that never ended when gpuplan cannot ask (it may still be running). Only real run
 * folders directly in the runs folder are removed: a symlink named like a run is not followed.
 */
import { lstat, rm } from "node:fs/promises";
import type { PruneResult } from "../schema-types/runs.js";
import type { RunInUse, RunListing } from "./list-runs.js";

/** A run folder changed this recently may be a run starting (its journal not written yet). */
const STARTING_MS = 10 * 60_000;

export async function pruneRuns(
  runs: readonly RunListing[],
  keep: number,
  inUse?: RunInUse,
  now: () => number = Date.now,
): Promise<PruneResult> {
  const result: PruneResult = { keep, removed: [], inUse: [], errors: [] };
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
 * Whether the run may be in use: what the run-level lock says, when gpuplan can ask it; without
 * it, a run that never ended (it may still be running), and a damaged one changed in the last
 * minutes (a run starting has a folder before its journal).
 */
async function mayBeInUse(
  run: RunListing,
  mtimeMs: number,
  nowMs: number,
  inUse?: RunInUse,
): Promise<boolean> {
  if (inUse) return inUse(run.dir).catch(() => true);
  if (run.status === "unfinished") return true;
  return run.status === "damaged" && nowMs - mtimeMs < STARTING_MS;
}
