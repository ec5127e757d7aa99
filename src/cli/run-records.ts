/**
 * A run's own records — its journal.jsonl, events.jsonl, plan.json, and what is under its logs/
 * and slurm/ — are never an output of another command. `report RUN1 -o RUN2/events.jsonl`
 * replaced another run's events with a page, and `--events RUN/journal.jsonl` of a new run put
 * event lines in an old run's journal, which its --resume then refused as damaged. A run folder
 * is known by its journal's first line, a run header; the run's report.html beside them, or any
 * other new file there, is written as before.
 */
import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { UsageError } from "../problems/errors.js";
import { runHeaderOf } from "../run/record/run-header-line.js";

const RECORDS = new Set(["journal.jsonl", "events.jsonl", "plan.json"]);
/** A run folder's subfolders that hold only its records. */
const RECORD_FOLDERS = new Set(["logs", "slurm"]);
/** Enough for a run header: it names the run's pipelines, not its steps. */
const HEADER_BYTES = 64 * 1024;

/** The path as the kernel would reach it: the file's real path, or its folder's for a new file; null when neither is there. */
function realPathOf(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    try {
      return join(realpathSync(dirname(path)), basename(path));
    } catch {
      return null;
    }
  }
}

/** Whether `dir` is a run folder: its journal.jsonl, a regular file, starts with a run header. */
function isRunFolder(dir: string): boolean {
  let fd: number;
  try {
    fd = openSync(
      join(dir, "journal.jsonl"),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFile()) return false;
    const buffer = Buffer.alloc(HEADER_BYTES);
    const text = buffer.toString("utf8", 0, readSync(fd, buffer, 0, HEADER_BYTES, 0));
    const end = text.indexOf("\n");
    return end !== -1 && runHeaderOf(text.slice(0, end)) !== null;
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/** The run folder whose record `path` would be, or null. */
function runRecordFolder(path: string): string | null {
  const real = realPathOf(path);
  if (real === null) return null;
  if (RECORDS.has(basename(real)) && isRunFolder(dirname(real))) return dirname(real);
  // logs/NAME, slurm/…/NAME: a few levels up at most.
  let dir = dirname(real);
  for (let depth = 0; depth < 3 && dirname(dir) !== dir; depth++, dir = dirname(dir))
    if (RECORD_FOLDERS.has(basename(dir)) && isRunFolder(dirname(dir))) return dirname(dir);
  return null;
}

/** Refuse an output (`flag PATH`) that would write over or into a run's records. */
export function refuseRunRecord(path: string, flag: string): void {
  const run = runRecordFolder(path);
  if (run === null) return;
  throw new UsageError(
    `${flag} ${path} is one of the records of run ${basename(run)} (${run}): writing there would destroy them`,
    "conflicting-options",
    "name a file outside the run's folder (a run's report may go to RUN/report.html)",
  );
}
