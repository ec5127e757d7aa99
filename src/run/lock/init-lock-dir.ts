/**
 * `gpuplan locks init`: the one-time admin set-up of a shared server. Root creates the shared
 * lock directory, root-owned and writable by root alone (so no user can delete, replace or plant
 * a lock file), and one root-owned lock file per GPU that every user (or the group given) can open
 * for locking. Each user's gpuplan then finds the directory by default and shares GPUs with the
 * others (docs/guides/locks.md). Its `warm/` folder, root's and sticky, is the one place users may
 * write: each gpuplan's `warm.<pid>.<random>.json`, for `gpuplan locks` (they cannot write the directory).
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fchownSync,
  lstatSync,
  mkdirSync,
  openSync,
  realpathSync,
  type Stats,
  statSync,
} from "node:fs";
import { dirname, join, resolve, sep } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { escapeText } from "../../text/safe-text.js";
import { makeFoldersSync } from "../record/make-folders.js";
import { gpuLockPath, openGpuLock, trustAncestors, warmFolderPath } from "./lock-dir.js";

export interface InitResult {
  dir: string;
  /** The folder where users' gpuplans list their warm workers. */
  warmDir: string;
  files: { uuid: string; path: string }[];
}

/** Create (or bring back in shape) the shared directory and a lock file for each GPU. Root only. */
export function initLockDir(path: string, uuids: readonly string[], gid: number | null): InitResult {
  if ((process.geteuid?.() ?? 0) !== 0)
    throw new UsageError(
      "gpuplan locks init sets up the shared lock directory, owned by root: run it as root",
      "lock-dir",
      "sudo gpuplan locks init [--group GROUP]",
    );
  // Absolute, for the GPUPLAN_LOCK_DIR it prints; and without a trailing slash, which made lstat
  // follow a symlink (`--dir link/`), so root chowned and chmodded where the link pointed.
  const dir = resolve(path);
  // The folders above it, before anything is made: every user's gpuplan refuses a lock directory
  // under a folder others may write (lock-dir.ts), and init must not set one up there. Those not
  // made yet are made by root, 0755, below the last that is there.
  const missing = firstMissing(dir);
  trustAncestors(dir, missing);
  refuseClosedAncestor(dir, missing, gid);
  const st = lstatOrNull(dir);
  if (st === null) makeFolders(dir);
  else if (st.isSymbolicLink())
    throw new UsageError(
      `${escapeText(dir)} is a symlink; the shared lock directory must be a real directory`,
      "lock-dir-untrusted",
      `remove it and run gpuplan locks init again`,
    );
  // Checked before chown and chmod: `--dir /etc/shadow` made root's shadow file 0755.
  else if (!st.isDirectory())
    throw new UsageError(
      `${escapeText(dir)} is not a directory; nothing was changed`,
      "lock-dir",
      "name a directory (new or existing) for --dir",
    );
  // Before anything is changed: a link or file left at warm/ (the directory may have been a user's) is refused.
  const warmDir = warmFolderPath(dir);
  const warmSt = lstatOrNull(warmDir);
  if (warmSt !== null && (warmSt.isSymbolicLink() || !warmSt.isDirectory()))
    throw new UsageError(
      `${escapeText(warmDir)} is ${warmSt.isSymbolicLink() ? "a symlink" : "not a directory"}; nothing was changed`,
      "lock-dir-untrusted",
      "remove it and run gpuplan locks init again",
    );
  // Writable by root only; with a group, only its members may enter.
  // Through a descriptor of the directory itself (O_NOFOLLOW): one swapped for a link since the check is refused.
  const dirFd = openSync(dir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  try {
    fchownSync(dirFd, 0, gid ?? 0);
    fchmodSync(dirFd, gid === null ? 0o755 : 0o750);
  } finally {
    closeSync(dirFd);
  }
  initWarmFolder(warmDir, gid);
  const mode = gid === null ? 0o666 : 0o660;
  const files = uuids.map((uuid) => {
    const path = gpuLockPath(dir, uuid);
    const fd = openGpuLock(path, mode);
    try {
      fchownSync(fd, 0, gid ?? 0);
      fchmodSync(fd, mode);
    } finally {
      closeSync(fd);
    }
    return { uuid, path };
  });
  return { dir, warmDir, files };
}

/**
 * `warm/`: every user (or the group's members) may add a file, and only its owner may remove or
 * replace it (sticky), like /tmp. Set up through a descriptor of the folder itself (O_NOFOLLOW).
 */
function initWarmFolder(warmDir: string, gid: number | null): void {
  try {
    mkdirSync(warmDir, { mode: 0o700 });
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "EEXIST")
      throw new UsageError(
        `cannot create ${escapeText(warmDir)}: ${code ?? String(e)}`,
        "lock-dir",
        "name a directory on a local, writable file system for --dir",
      );
  }
  let fd: number;
  try {
    fd = openSync(warmDir, constants.O_RDONLY | constants.O_DIRECTORY | constants.O_NOFOLLOW);
  } catch (e) {
    // Swapped for a link or a file since the check (only root can write the directory now).
    throw new UsageError(
      `${escapeText(warmDir)} is not a directory (${(e as NodeJS.ErrnoException).code ?? String(e)})`,
      "lock-dir-untrusted",
      "remove it and run gpuplan locks init again",
    );
  }
  try {
    fchownSync(fd, 0, gid ?? 0);
    fchmodSync(fd, gid === null ? 0o1777 : 0o1770);
  } finally {
    closeSync(fd);
  }
}

/** `dir`, or the highest of its folders that is not there yet: the folders above it all are. */
/**
 * A folder above the directory that other users (with a group: its members) may not pass through
 * (a 0700 home or mktemp folder) leaves every lock file out of their reach: said before anything
 * is made, where init would have told them all they could lock the GPUs. Their gpuplan would stop
 * at it (lock-dir), and at the default directory it would have used a private one of its own,
 * blind to the others' slots.
 */
function refuseClosedAncestor(dir: string, missing: string, gid: number | null): void {
  // The folders that are there, as their real paths: a link's target is what users pass through.
  const above = missing === dir && lstatOrNull(dir) !== null ? dirname(dir) : dirname(missing);
  const real = realpathSync(above);
  let path: string = sep;
  for (const part of ["", ...real.split(sep).filter(Boolean)]) {
    path = part === "" ? sep : join(path, part);
    const st = statSync(path);
    const passes = (st.mode & 0o001) !== 0 || (gid !== null && st.gid === gid && (st.mode & 0o010) !== 0);
    if (passes) continue;
    const who = gid === null ? "other users" : `the group's members (gid ${gid})`;
    throw new UsageError(
      `the folder ${escapeText(path)} above ${escapeText(dir)} (mode ${(st.mode & 0o7777).toString(8).padStart(4, "0")}) lets none of ${who} through: the lock files would be out of their reach; nothing was changed`,
      "lock-dir",
      gid === null
        ? `\`chmod o+x ${escapeText(path)}\`, or name a --dir every user can reach`
        : `\`chmod o+x ${escapeText(path)}\` (or give it the group with g+x), or name a --dir they can reach`,
    );
  }
}

function firstMissing(dir: string): string {
  let missing = dir;
  for (let up = dirname(dir); up !== missing && lstatOrNull(up) === null; up = dirname(up)) missing = up;
  return missing;
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") return null;
    throw e;
  }
}

/** `mkdir -p` (make-folders.ts); ENOENT under /proc or /sys — where no directory can be made — said, not a stack. */
function makeFolders(dir: string): void {
  try {
    makeFoldersSync(dir, 0o755);
  } catch (e) {
    const { code, path } = e as NodeJS.ErrnoException;
    throw new UsageError(
      `cannot create the shared lock directory ${escapeText(path ?? dir)}: ${code ?? String(e)}`,
      "lock-dir",
      "name a directory on a local file system, e.g. --dir /var/lib/gpuplan/locks",
    );
  }
}
