/**
 * Whether a run folder holds a Slurm run's records, for `gpuplan status` and for where `--resume`
 * goes. slurm/ is outside text: anything but a folder standing there (a file, a FIFO, a link) is
 * damage, said naming it. Read as "no records", a detached run whose jobs were still in Slurm was
 * taken for a local one: status said it never ran on Slurm, and --resume ran its pipelines here,
 * beside its tasks.
 */
import { lstatSync, type Stats } from "node:fs";
import { join } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { errnoOf } from "../../problems/file-errors.js";
import { kindOf } from "../../run/record/read-run-file.js";

/**
 * Whether the run has slurm/jobs.json (whatever stands there: readSlurmRecord says what is wrong
 * with one that is not its record). Throws damaged-run where slurm/ is not a folder.
 */
export function hasSlurmRecord(runDir: string): boolean {
  if (!hasSlurmFolder(runDir)) return false;
  try {
    return lstatSync(join(runDir, "slurm", "jobs.json"), { throwIfNoEntry: false }) !== undefined;
  } catch {
    // Unreadable (EACCES): there may be one, and its reader says why it cannot be read.
    return true;
  }
}

/** Whether the run has a slurm/ folder; throws damaged-run where something else stands there. */
export function hasSlurmFolder(runDir: string): boolean {
  const path = join(runDir, "slurm");
  let info: Stats | undefined;
  try {
    info = lstatSync(path, { throwIfNoEntry: false });
  } catch (e) {
    // The run folder itself not a folder (ENOTDIR): whoever reads the run folder says so.
    if (errnoOf(e) === "ENOTDIR") return false;
    return true;
  }
  if (info === undefined) return false;
  if (info.isDirectory()) return true;
  throw new UsageError(
    `${path} is damaged: ${kindOf(info)} stands where the run's Slurm records folder belongs`,
    "damaged-run",
    "restore the folder (its jobs.json names the run's Slurm jobs), or start a new run",
  );
}
