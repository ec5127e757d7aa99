/**
 * A run's own records — its journal.jsonl, events.jsonl, plan.json, and what is under its logs/
 * and slurm/ — are never an output of another command. `report RUN1 -o RUN2/events.jsonl`
 * replaced another run's events with a page, and `--events RUN/journal.jsonl` of a new run put
 * event lines in an old run's journal, which its --resume then refused as damaged. A run folder
 * is known by its journal's first line, a run header; the run's report.html beside them, or any
 * other new file there, is written as before.
 */
import { realpathSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { UsageError } from "../problems/errors.js";
import { readRunHeader } from "../run/record/run-header-line.js";

const RECORDS = new Set(["journal.jsonl", "events.jsonl", "plan.json"]);
/** A run folder's subfolders that hold only its records. */
const RECORD_FOLDERS = new Set(["logs", "slurm"]);

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

/** The run folder whose record `path` would be, or null. */
function runRecordFolder(path: string): string | null {
  const real = realPathOf(path);
  if (real === null) return null;
  if (RECORDS.has(basename(real)) && readRunHeader(dirname(real)) !== null) return dirname(real);
  // logs/NAME, slurm/…/NAME: a few levels up at most.
  let dir = dirname(real);
  for (let depth = 0; depth < 3 && dirname(dir) !== dir; depth++, dir = dirname(dir))
    if (RECORD_FOLDERS.has(basename(dir)) && readRunHeader(dirname(dir)) !== null) return dirname(dir);
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

/**
 * `--resume RUN --events RUN/events.jsonl` wrote every event twice into the run's own record (the
 * run appends there itself), and `--events RUN/journal.jsonl` put event lines in the journal,
 * which the next --resume refused as damaged. Nothing of the resumed run's folder is an --events
 * file; checked before anything is opened or made.
 */
export function refuseEventsInRunFolder(path: string, runDir: string): void {
  const dir = realPathOf(runDir);
  const events = realPathOf(path);
  if (dir === null || events === null || !`${events}/`.startsWith(`${dir}/`)) return;
  throw new UsageError(
    `--events ${path} is in the folder of run ${basename(runDir)}, which the resumed run writes itself (its events go to its own events.jsonl already)`,
    "conflicting-options",
    "leave out --events, or send the events elsewhere (--events events.jsonl)",
  );
}
