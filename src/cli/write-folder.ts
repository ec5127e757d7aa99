/**
 * Files gpuplan writes together into one folder (an export: plan.json, the sbatch scripts,
 * submit.sh), all or none. Each is written first into a staging folder of this invocation's own
 * inside the target (same filesystem, made fresh with mode 0700, so nothing can be planted in
 * it), then renamed into place. Ctrl-C, SIGTERM or SIGHUP while staging removes the staging
 * folder — and the target, when this invocation made it — and stops the process as the signal
 * would; one during the renames (microseconds each) is acted on once they are done. The names are
 * gpuplan's own (write-atomic.ts's "chosen" paths): rename(2) replaces a link or FIFO planted at
 * one, never follows it, and a directory at one refuses the whole write before anything is renamed.
 */
import { rmdirSync, rmSync } from "node:fs";
import { chmod, lstat, mkdir, rename, rmdir, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { UsageError } from "../problems/errors.js";
import { fileError } from "../problems/file-errors.js";
import { randomHex } from "../text/random-hex.js";
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
      if (there?.isDirectory())
        throw new UsageError(
          `${join(dir, f.name)} is a folder: gpuplan writes its own file there`,
          "unwritable-file",
          "move the folder away, then write again",
        );
    }
    committing = true;
    for (const name of folders)
      await mkdir(join(dir, name)).catch((e: NodeJS.ErrnoException) => {
        if (e.code !== "EEXIST") throw fileError(e, join(dir, name), "write", "folder");
      });
    for (const f of files)
      await rename(join(staging, f.name), join(dir, f.name)).catch((e: unknown) => {
        throw fileError(e, join(dir, f.name), "write", "file");
      });
    await rmdir(staging);
  } catch (e) {
    removeStaging();
    throw e;
  } finally {
    committing = false;
    forget();
    if (pending !== null) process.kill(process.pid, pending);
  }
}
