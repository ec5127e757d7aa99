/**
 * Whether a run folder holds a Slurm run's records, for `gpuplan status`, where `--resume` goes,
 * and how `gpuplan runs` and `gpuplan report` take the run. slurm/ is outside text: anything but a folder standing there (a file, a FIFO, a link) is
 * damage, said naming it. Read as "no records", a detached run whose jobs were still in Slurm was
 * taken for a local one: status said it never ran on Slurm, and --resume ran its pipelines here,
 * beside its tasks.
 */
import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { errnoOf } from "../../problems/file-errors.js";
import { kindOf } from "../../run/record/read-run-file.js";

/** The run's Slurm record, slurm/jobs.json: the arrays submitted for it (run-record.ts reads and writes it). */
export const slurmRecordFile = (runDir: string): string => join(runDir, "slurm", "jobs.json");

/** Whether the run has a slurm/ folder; throws damaged-run where something else stands there. */
export function hasSlurmFolder(runDir: string): boolean {
  const path = join(runDir, "slurm");
  const info = slurmEntry(runDir);
  if (info === undefined) return false;
  if (info === null || info.isDirectory()) return true;
  throw new UsageError(
    `${path} is damaged: ${standsThere(info)}`,
    "damaged-run",
    "restore the folder (its jobs.json names the run's Slurm jobs), or start a new run",
  );
}

/**
 * What is wrong with the run's slurm/ (`a FIFO stands where …`), for the readers that list or
 * report a damaged run rather than stop at it (`gpuplan runs`, `gpuplan report`); null where it is
 * a folder, or nothing (a local run).
 */
export function slurmFolderDamage(runDir: string): string | null {
  const info = slurmEntry(runDir);
  return info && !info.isDirectory() ? standsThere(info) : null;
}

const standsThere = (info: Stats): string =>
  `${kindOf(info)} stands where the run's Slurm records folder belongs`;

/**
 * slurm/ as lstat sees it: undefined where there is none (or the run folder is no folder, said
 * by whoever reads the run folder), null where it cannot be looked at (EACCES: there may be one,
 * and its reader says why it cannot be read).
 */
function slurmEntry(runDir: string): Stats | undefined | null {
  try {
    return lstatSync(join(runDir, "slurm"), { throwIfNoEntry: false });
  } catch (e) {
    return errnoOf(e) === "ENOTDIR" ? undefined : null;
  }
}
