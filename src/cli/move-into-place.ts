/**
 * The rename phase of write-folder.ts, all or none. Each file is renamed from the staging folder
 * into place; what stood at its name (an earlier export's file, a link) is first moved aside into
 * the staging folder, so that a rename that fails part-way (EACCES or EPERM on one name — another
 * user's file in a sticky folder —, a folder that appeared at one, EIO) can be undone: the files
 * already placed are removed, what they replaced is put back, and the folders this call made are
 * removed when empty. Before, such a failure left a half export (plan.json and some scripts, the
 * replaced files gone).
 */
import { lstat, mkdir, rename, rmdir, unlink } from "node:fs/promises";
import { join } from "node:path";
import { UsageError } from "../problems/errors.js";
import { errnoOf, fileError } from "../problems/file-errors.js";

/** A folder stands where gpuplan writes a file of its own. */
export const folderInTheWay = (path: string): UsageError =>
  new UsageError(
    `${path} is a folder: gpuplan writes its own file there`,
    "unwritable-file",
    "move the folder away, then write again",
  );

/** The undo itself failed: the staging folder keeps what could not be put back, and must stay. */
export class StagingKept extends UsageError {}

interface Moved {
  name: string;
  /** What stood at the name is in the aside folder. */
  replaced: boolean;
  /** Our file is at the name. */
  placed: boolean;
}

/**
 * Rename `names` from `staging` into `dir` and make the empty `folders` there (one that exists is
 * kept). On failure everything is as it was and the error (a UsageError naming the file) says so;
 * a StagingKept when something could not be put back, naming where it is.
 */
export async function moveIntoPlace(
  staging: string,
  dir: string,
  names: readonly string[],
  folders: readonly string[],
): Promise<void> {
  // Inside staging (0700, ours, the same file system): what is moved aside is renamed, never copied.
  const aside = join(staging, ".replaced");
  const made: string[] = [];
  const moved: Moved[] = [];
  try {
    await mkdir(aside, { mode: 0o700 }).catch((e: unknown) => {
      throw fileError(e, aside, "write", "folder");
    });
    for (const name of folders)
      await mkdir(join(dir, name)).then(
        () => made.push(name),
        (e: unknown) => {
          if (errnoOf(e) !== "EEXIST") throw fileError(e, join(dir, name), "write", "folder");
        },
      );
    for (const name of names) {
      const target = join(dir, name);
      const entry: Moved = { name, replaced: false, placed: false };
      moved.push(entry);
      entry.replaced = await rename(target, join(aside, name)).then(
        () => true,
        (e: unknown) => {
          if (errnoOf(e) === "ENOENT") return false;
          throw fileError(e, target, "write", "file");
        },
      );
      // A folder made there since write-folder.ts looked: it goes back, never away with staging.
      const was = entry.replaced
        ? await lstat(join(aside, name)).catch((e: unknown) => {
            throw fileError(e, target, "write", "file");
          })
        : null;
      if (was?.isDirectory()) throw folderInTheWay(target);
      await rename(join(staging, name), target).catch((e: unknown) => {
        throw fileError(e, target, "write", "file");
      });
      entry.placed = true;
    }
  } catch (e) {
    const notBack = await undo(dir, aside, moved, made);
    if (notBack.length === 0) {
      // Not a file error (our bug): undone all the same, and reported as it is.
      if (!(e instanceof UsageError)) throw e;
      throw new UsageError(`${e.message}; nothing in ${dir} was changed`, e.code, e.hint);
    }
    const usage = e instanceof UsageError ? e : null;
    throw new StagingKept(
      `${usage?.message ?? String(e)}; undoing the write, ${notBack.map((n) => join(dir, n)).join(", ")} could not be put back as they were`,
      usage?.code ?? "unwritable-file",
      `what stood there is in ${aside} (the new files beside it): move it back by hand${usage?.hint ? `; ${usage.hint}` : ""}`,
    );
  }
}

/** Undo `moved` (last first) and the folders made; the names not as they were. */
async function undo(dir: string, aside: string, moved: readonly Moved[], made: readonly string[]) {
  const notBack: string[] = [];
  for (const { name, replaced, placed } of [...moved].reverse()) {
    const target = join(dir, name);
    try {
      // rename(2) puts the earlier file back over ours in one step; with none, ours is removed.
      if (replaced) await rename(join(aside, name), target);
      else if (placed) await unlink(target);
    } catch {
      notBack.push(name);
    }
  }
  for (const name of made) await rmdir(join(dir, name)).catch(() => {});
  return notBack.reverse();
}
