/**
 * Which folders in the runs folder are runs, and their order by when each started — one order
 * for `gpuplan runs` (newest first), `report`'s newest run and `--history auto`. gpuplan run's
 * ids (`20261122T011500Z-3fa9c1`) say when the run started; an exported array's `slurm-JOB`
 * does not, and its journal header (written by its first task to start) does — or, without
 * one, its folder's time. By name, `slurm-JOB` sorts above every dated run.
 */
import { lstat, open, readdir } from "node:fs/promises";
import { join } from "node:path";
import { errnoOf, fileError } from "../problems/file-errors.js";
import { RUN_ID_PATTERN, runIdTime, SLURM_RUN_ID_PATTERN } from "../run/prepare/run-id.js";

/** Whether `name` is a run folder's: gpuplan run's (`20261122T011500Z-3fa9c1`) or an exported array's (`slurm-JOB`). */
export const isRunId = (name: string): boolean =>
  RUN_ID_PATTERN.test(name) || SLURM_RUN_ID_PATTERN.test(name);

/** How much of a journal is read for its header's start: a header names the run's pipelines, not its steps. */
const HEADER_BYTES = 4 * 1024 * 1024;

/**
 * When the run `id` in `dir` started (epoch ms): its id's time, else `startedAt` (its journal
 * header's, where the caller has read it; read here when undefined), else its folder's time.
 */
export async function runStartMs(dir: string, id: string, startedAt?: string | null): Promise<number> {
  const fromId = runIdTime(id);
  if (fromId !== null) return fromId;
  const started = Date.parse((startedAt === undefined ? await headerStartedAt(dir) : startedAt) ?? "");
  if (Number.isFinite(started)) return started;
  return (await lstat(dir).catch(() => null))?.mtimeMs ?? 0;
}

/** Newest first by start; at the same start, by id (descending), so the order is the same every time. */
export function byNewest(a: { start: number; id: string }, b: { start: number; id: string }): number {
  return b.start - a.start || (a.id < b.id ? 1 : a.id > b.id ? -1 : 0);
}

/** The runs in `runsDir` (folders with a run's name, not links), newest first by when they started. */
export async function runIdsNewestFirst(runsDir: string): Promise<string[]> {
  const entries = await readdir(runsDir, { withFileTypes: true }).catch((e: unknown) =>
    noRunsFolder(e, runsDir),
  );
  const runs: { id: string; start: number }[] = [];
  // One at a time: only a slurm-JOB opens a file, and thousands at once would run out of descriptors.
  for (const e of entries)
    if (e.isDirectory() && isRunId(e.name))
      runs.push({ id: e.name, start: await runStartMs(join(runsDir, e.name), e.name) });
  return runs.sort(byNewest).map((r) => r.id);
}

/**
 * Reading the runs folder failed: a folder that is not there yet holds no runs; anything else
 * (EACCES: a .gpuplan another user made, mode 0700; ENOTDIR: a file in its place) is said, as
 * `runs` said "no runs" (exit 0) and `report` "no runs in .gpuplan/runs" of a folder full of them.
 */
export function noRunsFolder(e: unknown, runsDir: string): never[] {
  if (errnoOf(e) === "ENOENT") return [];
  throw fileError(e, runsDir, "read", "the runs folder");
}

/** The `startedAt` of the run header on the journal's first line, or null (no journal, not a regular file, no header). */
async function headerStartedAt(dir: string): Promise<string | null> {
  const path = join(dir, "journal.jsonl");
  // A FIFO or a device would block: only a regular file is read.
  const info = await lstat(path).catch(() => null);
  if (!info?.isFile()) return null;
  const handle = await open(path, "r").catch(() => null);
  if (!handle) return null;
  try {
    const buffer = Buffer.alloc(Math.min(info.size, HEADER_BYTES));
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, 0);
    const text = buffer.subarray(0, bytesRead).toString("utf8");
    const end = text.indexOf("\n");
    const header = JSON.parse(end === -1 ? text : text.slice(0, end)) as {
      type?: unknown;
      startedAt?: unknown;
    };
    return header.type === "run" && typeof header.startedAt === "string" ? header.startedAt : null;
  } catch {
    return null;
  } finally {
    await handle.close();
  }
}
