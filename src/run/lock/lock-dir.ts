/**
 * The lock directory and the one lock file per GPU in it (`<uuid>.gpu.lock`), and the trust
 * model that keeps other local users from breaking the lock (docs/guides/locks.md):
 * - the directory is used only when it is not a symlink, is owned by root or by this user, and
 *   is not writable by anyone else unless it has the sticky bit; otherwise gpuplan refuses;
 * - so is every folder above it, from / down, symlinks followed to the real folders
 *   (folder-trust.ts): one another user may write lets her swap the whole directory for hers;
 * - a lock file is opened with O_NOFOLLOW and used only when it is a regular file with one link,
 *   owned by root or by this user: a file someone else planted is never trusted;
 * - lock files are never unlinked (removing one while held would let a second process lock a
 *   fresh inode under the same name), and other entries in the directory are ignored.
 */
import {
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  lstatSync,
  openSync,
  readFileSync,
  type Stats,
} from "node:fs";
import { join, resolve } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { makeFoldersSync } from "../record/make-folders.js";
import { defaultLockDir } from "./default-lock-dir.js";
import { distrustOf, euid, untrustedAncestor } from "./folder-trust.js";

/** The directory given (the CLI resolves --lock-dir and GPUPLAN_LOCK_DIR), else the default; always absolute. */
export function resolveLockDir(dir?: string): string {
  return resolve(dir ?? defaultLockDir());
}

/** Shared: other users' gpuplans use it too (root's); private: only this user's. */
export type LockDirMode = "shared" | "private";

/**
 * Check the directory (creating it, private, when missing) and say which mode it is in.
 * Throws a UsageError (exit 2) naming the owner, the mode and the fix when it is not trustworthy.
 */
export function ensureLockDir(dir: string): LockDirMode {
  let st = lstatOrNull(dir);
  if (st === null) {
    try {
      // Not mkdir's recursive option: it spins forever under /proc (make-folders.ts).
      makeFoldersSync(dir, 0o700);
    } catch (e) {
      if (errorCode(e) !== "EEXIST") throw lockDirError(dir, e);
    }
    st = lstatOrNull(dir);
    if (st === null) throw lockDirError(dir, new Error("it vanished as it was created"));
  }
  return trustLockDir(dir, st);
}

/** The mode of an existing directory, or null when it does not exist yet; throws when untrusted. */
export function checkLockDir(dir: string): LockDirMode | null {
  const st = lstatOrNull(dir);
  return st === null ? null : trustLockDir(dir, st);
}

/**
 * Where gpuplans that cannot write the lock directory (root's, 0755 or 0750, as `locks init`
 * makes it) keep their `warm.<pid>.<random>.json`: root's, 1777 (or 1770 with a group), made by `locks init`.
 */
export const warmFolderPath = (dir: string): string => join(dir, "warm");

/** `alice (uid 1001)`, or `uid 1001`: for messages about who owns a file. */
export const ownerName = (uid: number): string => userName(uid);

const FIX =
  "use a directory of your own (GPUPLAN_LOCK_DIR), or on a shared server ask an admin to run `sudo gpuplan locks init`";

const modeOf = (st: Stats): string => (st.mode & 0o7777).toString(8).padStart(4, "0");

function trustLockDir(dir: string, st: Stats): LockDirMode {
  trustAncestors(dir);
  const mode = modeOf(st);
  switch (distrustOf(st)) {
    case "symlink":
      throw new UsageError(
        `the GPU lock directory ${dir} is a symlink (owned by ${userName(st.uid)}); gpuplan does not follow it`,
        "lock-dir-untrusted",
        `another user could point it anywhere: remove it, or ${FIX}`,
      );
    case "not-directory":
      throw new UsageError(
        `the GPU lock directory ${dir} is not a directory`,
        "lock-dir",
        `remove it, or ${FIX}`,
      );
    case "owner":
      throw new UsageError(
        `the GPU lock directory ${dir} is owned by ${userName(st.uid)} (mode ${mode}), not by you or root: its owner could break the lock`,
        "lock-dir-untrusted",
        dir.startsWith("/tmp/gpuplan-locks")
          ? `someone else created it first: ask them (or root) to remove it, or ${FIX}`
          : FIX,
      );
    case "others-write":
      throw new UsageError(
        `the GPU lock directory ${dir} (owned by ${userName(st.uid)}, mode ${mode}) is writable by other users without the sticky bit: they could delete or replace its lock files`,
        "lock-dir-untrusted",
        `\`chmod 0700 ${dir}\` (private) or \`chmod 1777 ${dir}\`, or ${FIX}`,
      );
    case null:
      break;
  }
  // Root's directory that others may enter is the shared one; a user's own is theirs alone.
  return st.uid === 0 && (st.mode & 0o011) !== 0 ? "shared" : "private";
}

/**
 * The folders above the lock directory, from / down (symlinks followed to the real folders):
 * another user who may write one could rename the lock directory, or a folder above it, away and
 * put her own in its place, and every lock file would then be hers.
 */
export function trustAncestors(dir: string, from: string = dir): void {
  let found: ReturnType<typeof untrustedAncestor>;
  try {
    // `from`: the folder whose ancestors are looked at, where `dir` is not made yet (locks init).
    found = untrustedAncestor(from);
  } catch (e) {
    throw lockDirError(dir, e);
  }
  if (found === null) return;
  const { path, st, why } = found;
  const where = `${path} above the GPU lock directory ${dir}`;
  const owned = `owned by ${userName(st.uid)}, mode ${modeOf(st)}`;
  if (st.isSymbolicLink() && why === "owner")
    throw new UsageError(
      `the symlink ${where} is owned by ${userName(st.uid)}, not by you or root: its owner could point it elsewhere`,
      "lock-dir-untrusted",
      `use a path without it, or ${FIX}`,
    );
  switch (why) {
    case "owner":
      throw new UsageError(
        `the folder ${where} is ${owned}, not by you or root: its owner could replace the lock directory`,
        "lock-dir-untrusted",
        FIX,
      );
    case "others-write":
      throw new UsageError(
        `the folder ${where} (${owned}) is writable by other users without the sticky bit: they could rename the lock directory away and put their own in its place`,
        "lock-dir-untrusted",
        `\`chmod go-w ${path}\` (or \`chmod +t ${path}\`, as /tmp is), or ${FIX}`,
      );
    default:
      // A folder swapped for a link or a file between realpath and lstat (or links without end).
      throw new UsageError(
        `the folder ${where} changed while it was checked (${owned})`,
        "lock-dir-untrusted",
        `run the command again, or ${FIX}`,
      );
  }
}

/** GPU UUIDs are file-name safe except old-style MIG ids (`MIG-GPU-…/1/0`); escape anything else. */
function encodeUuid(uuid: string): string {
  return uuid.replace(/[^A-Za-z0-9_-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

function decodeUuid(name: string): string {
  return name.replace(/%([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

export const gpuLockPath = (dir: string, uuid: string): string => join(dir, `${encodeUuid(uuid)}.gpu.lock`);

const GPU_FILE = /^([A-Za-z0-9_%-]+)\.gpu\.lock$/;

/** The GPU a directory entry is the lock file of, or null (anything else in the directory is ignored). */
export function parseGpuLockFile(name: string): string | null {
  const m = GPU_FILE.exec(name);
  return m ? decodeUuid(m[1]!) : null;
}

// O_NOFOLLOW: a planted symlink (to our ~/.bashrc) is refused; O_NONBLOCK: a planted FIFO does not hang (Node adds O_CLOEXEC itself).
const SAFE = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Open (creating if needed) a GPU's lock file for locking: a fresh open file description, which
 * is what a lock belongs to. A new file is 0600, or 0666 when root makes it (root's files are the
 * shared ones). Throws a UsageError when the file is not one to trust.
 */
export function openGpuLock(path: string, fileMode?: number): number {
  return openTrusted(path, fileMode).fd;
}

/**
 * openGpuLock, and the file opened still the one at `path` (else opened again, twice at most):
 * nobody can unlink or rename over a file in a trusted directory but its owner or root, and
 * gpuplan never does, but a lock on an unlinked inode would exclude nobody. The fstat the trust
 * check made serves the comparison too (an open file's inode does not change).
 */
export function openLinkedGpuLock(path: string): number {
  for (let attempt = 0; ; attempt++) {
    const { fd, st } = openTrusted(path);
    if (attempt >= 2 || isSameFile(st, path)) return fd;
    closeSync(fd);
  }
}

function openTrusted(path: string, fileMode?: number): { fd: number; st: Stats } {
  for (let attempt = 0; ; attempt++) {
    try {
      const fd = openSync(path, constants.O_RDWR | SAFE);
      return { fd, st: trusted(fd, path) };
    } catch (e) {
      if (errorCode(e) !== "ENOENT" || attempt > 3) throw lockFileError(path, e);
    }
    try {
      const mode = fileMode ?? (euid() === 0 ? 0o666 : 0o600);
      const fd = openSync(path, constants.O_RDWR | SAFE | constants.O_CREAT | constants.O_EXCL, mode);
      fchmodSync(fd, mode);
      return { fd, st: trusted(fd, path) };
    } catch (e) {
      // EEXIST: another process created it first; open theirs.
      if (errorCode(e) !== "EEXIST") throw lockFileError(path, e);
    }
  }
}

/** Open an existing lock file to look at it (inspect); null when missing, not regular or not trusted. */
export function openGpuLockToRead(path: string): number | null {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | SAFE);
  } catch {
    return null;
  }
  try {
    trusted(fd, path);
    return fd;
  } catch {
    return null;
  }
}

function isSameFile(open: Stats, path: string): boolean {
  try {
    const named = lstatSync(path);
    return open.ino === named.ino && open.dev === named.dev;
  } catch {
    return false;
  }
}

/** The open lock file's stat when it is one to trust; else it is closed and a UsageError thrown. */
function trusted(fd: number, path: string): Stats {
  const st = fstatSync(fd);
  const problem = !st.isFile()
    ? "is not a regular file"
    : st.uid !== euid() && st.uid !== 0
      ? `is owned by ${userName(st.uid)}, not by you or root: it may have been planted`
      : st.nlink !== 1
        ? `has ${st.nlink} hard links: it may have been planted`
        : null;
  if (problem === null) return st;
  closeSync(fd);
  throw new UsageError(
    `the GPU lock file ${path} ${problem}`,
    st.isFile() ? "lock-file-untrusted" : "lock-file-not-regular",
    "gpuplan never uses a lock file another user could control: remove it (as its owner or root), or use another lock directory (GPUPLAN_LOCK_DIR)",
  );
}

function lstatOrNull(path: string): Stats | null {
  try {
    return lstatSync(path);
  } catch (e) {
    if (errorCode(e) === "ENOENT") return null;
    throw lockDirError(path, e);
  }
}

let names: Map<number, string> | undefined;

/** `alice (uid 1001)`, or `uid 1001` when /etc/passwd does not name it. */
function userName(uid: number): string {
  if (!names) {
    names = new Map();
    try {
      for (const line of readFileSync("/etc/passwd", "utf8").split("\n")) {
        const [name, , id] = line.split(":");
        if (name && id !== undefined && /^\d+$/.test(id) && !names.has(Number(id)))
          names.set(Number(id), name);
      }
    } catch {
      // Names are a courtesy.
    }
  }
  const name = names.get(uid);
  return name === undefined ? `uid ${uid}` : `${name} (uid ${uid})`;
}

function errorCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e ? String(e.code) : undefined;
}

function lockDirError(dir: string, e: unknown): Error {
  return new UsageError(
    `cannot create or read the GPU lock directory ${dir}: ${e instanceof Error ? e.message : String(e)}`,
    "lock-dir",
    "set GPUPLAN_LOCK_DIR (or --lock-dir) to a directory you own",
  );
}

function lockFileError(path: string, e: unknown): Error {
  if (e instanceof UsageError) return e;
  const code = errorCode(e);
  return new UsageError(
    `cannot open the GPU lock file ${path}: ${e instanceof Error ? e.message : String(e)}`,
    "lock-file",
    code === "ELOOP"
      ? "it is a symlink, which gpuplan never follows: remove it"
      : code === "EACCES"
        ? "in a shared lock directory an admin creates the lock files: run `sudo gpuplan locks init` again (say, for a new GPU)"
        : "use a lock directory you own (GPUPLAN_LOCK_DIR)",
  );
}
