/**
 * Files gpuplan writes together into one folder (an export: plan.json, the sbatch scripts,
 * submit.sh), all or none. Each is written first into a staging folder of this invocation's own
 * inside the target (same filesystem, made fresh with mode 0700, so nothing can be planted in
 * it), then renamed into place. Ctrl-C, SIGTERM or SIGHUP while staging removes the staging
 * folder — and the target, when this invocation made it — and stops the process as the signal
 * would; one during the renames (microseconds each) is acted on once they are done. The names are
 * gpuplan's own (write-atomic.ts's "chosen" paths): a link or FIFO planted at one is moved aside,
 * never followed, and a directory at one refuses the whole write before anything is renamed. A
 * rename that fails part-way is undone (move-into-place.ts).
 */
import { rmdirSync, rmSync } from "node:fs";
import { chmod, lstat, mkdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileError } from "../problems/file-errors.js";
import { randomHex } from "../text/random-hex.js";
import { folderInTheWay, moveIntoPlace, StagingKept } from "./move-into-place.js";
import { listenForStop } from "./write-file.js";

export interface FolderFile {
  name: string;
  text: string;
  executable?: boolean;
}

/**
 * Write `files` (plain names, in order) into `dir`, which exists, and make the empty `folders`
 * there (one that exists is kept) with them; `made`: this invocation made `dir` (an interrupt
 * removes it again, if empty). Errors are UsageErrors naming the file.
 */
export async function writeFolderFiles(
  dir: string,
  files: readonly FolderFile[],
  folders: readonly string[],
  made: boolean,
): Promise<void> {
  const staging = join(dir, `.gpuplan-write.${process.pid}.${randomHex(6)}.tmp`);
  let pending: NodeJS.Signals | null = null;
  let committing = false;
  const removeStaging = () => {
    rmSync(staging, { recursive: true, force: true });
    if (made) {
      try {
        // Only if empty: what someone else put there meanwhile stays.
        rmdirSync(dir);
      } catch {}
    }
  };
  const forget = listenForStop((signal) => {
    if (committing) {
      pending = signal;
      return;
    }
    removeStaging();
    forget();
    process.kill(process.pid, signal);
  });
  try {
    await mkdir(staging, { mode: 0o700 }).catch((e: unknown) => {
      throw fileError(e, staging, "write", "folder");
    });
    for (const f of files) {
      const path = join(staging, f.name);
      await writeFile(path, f.text, { flag: "wx", mode: f.executable ? 0o755 : 0o666 }).catch(
        (e: unknown) => {
          throw fileError(e, join(dir, f.name), "write", "file");
        },
      );
      // The umask may have taken bits off: the scripts must run as ./submit.sh.
      if (f.executable) await chmod(path, 0o755);
    }
    for (const f of files) {
      const there = await lstat(join(dir, f.name)).catch(() => null);
      if (there?.isDirectory()) throw folderInTheWay(join(dir, f.name));
    }
    committing = true;
    await moveIntoPlace(
      staging,
      dir,
      files.map((f) => f.name),
      folders,
    );
    // What the files replaced was moved in here and goes with it; the export is done either way.
    try {
      rmSync(staging, { recursive: true, force: true });
    } catch {}
  } catch (e) {
    // Unless it holds what could not be put back.
    if (!(e instanceof StagingKept)) removeStaging();
    throw e;
  } finally {
    committing = false;
    forget();
    if (pending !== null) process.kill(process.pid, pending);
  }
}
