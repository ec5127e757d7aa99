/**
 * Which folders gpuplan trusts to hold the GPU lock: the lock directory, its `warm/` folder, and
 * every folder above the lock directory. A folder another user may write (without the sticky bit)
 * lets that user rename what is in it away and put her own in its place — for a folder above the
 * lock directory, the whole lock directory, lock files and all. So, as sshd's StrictModes and sudo
 * do, each folder from / down is checked, after any symlink on the way is followed to the real
 * folders it names (/var/run -> /run): those are the folders the kernel walks each time a lock
 * file is opened by its path.
 */
import { lstatSync, realpathSync, type Stats } from "node:fs";
import { dirname, join, sep } from "node:path";

let myEuid: number | undefined;
/** This process's effective uid, asked once: gpuplan never changes it, and a run asks per slot. */
export const euid = (): number => (myEuid ??= process.geteuid?.() ?? 0);

/** Owned by root or this user: nobody else may chmod it, or (a link) replace it in a sticky folder. */
const isTrustedOwner = (uid: number): boolean => uid === euid() || uid === 0;

/**
 * Why a folder of the lock directory is not one to trust, or null: a symlink (another user could
 * point it anywhere), not a directory, owned by someone but this user or root, or writable by
 * others without the sticky bit (they could delete or replace what is in it). The lock directory,
 * its `warm/` folder and the real folders above it are held to this one rule.
 */
export type FolderDistrust = "symlink" | "not-directory" | "owner" | "others-write";

export function distrustOf(st: Stats): FolderDistrust | null {
  if (st.isSymbolicLink()) return "symlink";
  if (!st.isDirectory()) return "not-directory";
  if (!isTrustedOwner(st.uid)) return "owner";
  const othersWrite = (st.mode & 0o022) !== 0;
  const sticky = (st.mode & 0o1000) !== 0;
  return othersWrite && !sticky ? "others-write" : null;
}

/** A folder above the lock directory that is not one to trust, and why. */
export interface UntrustedFolder {
  path: string;
  st: Stats;
  why: FolderDistrust;
}

/**
 * The first folder from / down to the lock directory's parent that is not one to trust, or null.
 * A symlink on the way is followed: the link must be owned by root or this user (in a sticky
 * folder its owner may replace it) and the real folders it leads to are checked in turn. Not
 * cached: a slot lock checks its directory once (index.ts prepare()), a few lstat calls.
 * Throws what lstat or realpath throw (the caller says which directory).
 */
export function untrustedAncestor(dir: string): UntrustedFolder | null {
  return untrustedOnPath(dirname(dir), 0);
}

/** Symlinks followed before giving up, as the kernel does (ELOOP after 40). */
const MAX_LINKS = 40;

function untrustedOnPath(path: string, links: number): UntrustedFolder | null {
  let here: string = sep;
  const root = judge(here, lstatSync(here));
  if (root !== null) return root;
  for (const name of path.split(sep).filter((part) => part !== "")) {
    const next = join(here, name);
    const st = lstatSync(next);
    if (st.isSymbolicLink()) {
      // The folder holding it was judged; whoever may replace the link is its owner or theirs.
      if (!isTrustedOwner(st.uid)) return { path: next, st, why: "owner" };
      if (links >= MAX_LINKS) return { path: next, st, why: "symlink" };
      const real = realpathSync(next);
      const found = untrustedOnPath(real, links + 1);
      if (found !== null) return found;
      here = real;
    } else {
      const found = judge(next, st);
      if (found !== null) return found;
      here = next;
    }
  }
  return null;
}

function judge(path: string, st: Stats): UntrustedFolder | null {
  const why = distrustOf(st);
  return why === null ? null : { path, st, why };
}
