/**
 * Opening a file of a run folder for a report so that what is read is a regular file inside that
 * folder. A run folder is outside text (a copied folder, a shared server's): a planted
 * `logs/x.err.log -> ~/.ssh/id_ed25519`, or `logs -> /`, would otherwise put another file's last
 * lines into a page that gets passed around. O_NOFOLLOW refuses a link as the file itself, the
 * descriptor's real path catches a linked folder above it, and the kind is checked with fstat on
 * the open descriptor, so nothing can be swapped in between a check and the read; O_NONBLOCK
 * keeps a planted FIFO from blocking the open.
 */
import { constants } from "node:fs";
import { type FileHandle, open, readlink, realpath } from "node:fs/promises";
import { sep } from "node:path";
import { errnoOf } from "../problems/file-errors.js";

/** The open file and its size, or why it was not opened ("missing" when it is not there), for a note. */
export type Opened = { handle: FileHandle; size: number } | { refused: string };

const LINK_REFUSAL = "a symbolic link, which a report does not follow";

/**
 * `path` opened for reading if it is a regular file whose real path is inside `folderReal` (a real
 * path). `oneName`: refuse a file with other hard links too (a log, whose last lines a page shows).
 */
export async function openInFolder(folderReal: string, path: string, oneName = false): Promise<Opened> {
  let handle: FileHandle;
  try {
    handle = await open(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = errnoOf(e);
    // Linux says ELOOP for O_NOFOLLOW on a link (and for a loop of links above it), FreeBSD EMLINK.
    if (code === "ELOOP" || code === "EMLINK") return { refused: LINK_REFUSAL };
    return { refused: code === "ENOENT" ? "missing" : (code ?? String(e)) };
  }
  try {
    const info = await handle.stat();
    if (!info.isFile()) return close(handle, "not a regular file");
    // A hard link is another name for a file anywhere on the disk (where fs.protected_hardlinks
    // is off, or in an unpacked archive). Logs only: a run folder copied with `cp -al` (a backup)
    // still has its journal and events read, which show no file's text.
    if (oneName && info.nlink > 1)
      return close(handle, "a hard link to a file elsewhere, which a report does not read");
    if (!isInside(folderReal, await realPathOf(handle, path)))
      return close(handle, "outside the run folder (a folder on its way is a symbolic link)");
    return { handle, size: info.size };
  } catch (e) {
    return close(handle, errnoOf(e) ?? String(e));
  }
}

/** The run folder's real path, which opened files are checked against. */
export const realFolder = (dir: string): Promise<string> => realpath(dir).catch(() => dir);

/**
 * Where the open descriptor really is (Linux: /proc/self/fd, race-free); elsewhere the path's
 * real path, which a swap could still beat, but Linux is where gpuplan runs.
 */
async function realPathOf(handle: FileHandle, path: string): Promise<string> {
  return readlink(`/proc/self/fd/${handle.fd}`).catch(() => realpath(path));
}

const isInside = (folder: string, path: string): boolean =>
  path.startsWith(folder.endsWith(sep) ? folder : `${folder}${sep}`);

async function close(handle: FileHandle, refused: string): Promise<Opened> {
  await handle.close().catch(() => undefined);
  return { refused };
}
