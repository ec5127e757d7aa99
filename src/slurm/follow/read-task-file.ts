/**
 * The one way a file of a Slurm run's slurm/ folder is read: jobs.json, a task's events file, its
 * start marker, Slurm's .err of a task. That folder is outside text — the tasks write it from the
 * nodes, and anyone who may write the run folder can plant things in it — so, as readFileHead
 * reads a run's journal head (src/run/record/run-header-line.ts): the file is opened with
 * O_NOFOLLOW (a link is refused) and O_NONBLOCK (a FIFO in its place would hold `gpuplan status`,
 * the follower and --resume forever waiting for a writer), its kind is checked on the open
 * descriptor (nothing can be swapped in between), its real path must be inside the run's slurm/
 * (a linked folder on the way leads out), and at most a bound of it is read.
 */
import { closeSync, constants, fstatSync, openSync, readlinkSync, readSync, realpathSync } from "node:fs";
import { join, sep } from "node:path";
import { errnoOf } from "../../problems/file-errors.js";

/** The bytes read, where they start in the file, and the file's size; or why none were read. */
export type TaskFileRead = { bytes: Buffer; start: number; size: number } | { refused: string };

export interface TaskFileBounds {
  /** At most this many bytes are read. */
  maxBytes: number;
  /** Read from this offset on (default 0)… */
  from?: number;
  /** …or the file's last maxBytes instead (a task's .err that printed gigabytes is never read whole). */
  tail?: boolean;
}

/** `missing`: the file is not there (a task that has not written it yet), which is no damage. */
export const MISSING = "missing";

/** `name` (a path inside the run's slurm/ folder) read within `bounds`, or why it was refused. */
export function readTaskFile(runDir: string, name: string, bounds: TaskFileBounds): TaskFileRead {
  const path = join(runDir, "slurm", name);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = errnoOf(e);
    if (code === "ENOENT" || code === "ENOTDIR") return { refused: MISSING };
    // Linux says ELOOP for O_NOFOLLOW on a link.
    return {
      refused: code === "ELOOP" ? "it is a symbolic link" : `it cannot be read (${code ?? String(e)})`,
    };
  }
  try {
    const info = fstatSync(fd);
    if (!info.isFile()) return { refused: `it is ${kindOf(info)}, not a regular file` };
    if (!isInsideSlurmDir(runDir, fd))
      return { refused: "it is outside the run folder (a folder on its way is a symbolic link)" };
    const size = info.size;
    const start = bounds.tail ? Math.max(0, size - bounds.maxBytes) : Math.min(bounds.from ?? 0, size);
    const bytes = Buffer.alloc(Math.max(0, Math.min(bounds.maxBytes, size - start)));
    let got = 0;
    // A regular file may still grow or shrink meanwhile: what one read gives is what there is.
    while (got < bytes.length) {
      const n = readSync(fd, bytes, got, bytes.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    return { bytes: bytes.subarray(0, got), start, size };
  } catch (e) {
    return { refused: `it cannot be read (${errnoOf(e) ?? String(e)})` };
  } finally {
    closeSync(fd);
  }
}

/** readTaskFile's bytes as text, or why none were read. */
export function readTaskText(
  runDir: string,
  name: string,
  bounds: TaskFileBounds,
): string | { refused: string } {
  const read = readTaskFile(runDir, name, bounds);
  return "bytes" in read ? read.bytes.toString("utf8") : read;
}

/**
 * Whether the open file is inside the run's slurm/ folder as its real path says (Linux:
 * /proc/self/fd, race-free). Where neither can be resolved it is taken as inside: O_NOFOLLOW
 * already refused a link as the file itself.
 */
function isInsideSlurmDir(runDir: string, fd: number): boolean {
  let real: string;
  let folder: string;
  try {
    real = readlinkSync(`/proc/self/fd/${fd}`);
    // The run folder's real path and slurm/ under it: slurm/ itself a link to elsewhere leads out.
    folder = join(realpathSync(runDir), "slurm");
  } catch {
    return true;
  }
  return real.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);
}

function kindOf(info: { isDirectory(): boolean; isFIFO(): boolean; isSocket(): boolean }): string {
  if (info.isDirectory()) return "a directory";
  if (info.isFIFO()) return "a FIFO";
  if (info.isSocket()) return "a socket";
  return "a device";
}
