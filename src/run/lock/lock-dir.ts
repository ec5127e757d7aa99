/**
 * The lock directory and the files in it. Per GPU: `<uuid>.gate.lock` (the writer-preference
 * gate), `<uuid>.slot<N>.lock` (one per slot) and `<uuid>.slot<N>.json` (who holds slot N).
 * Files are never deleted: removing a lock file while someone holds it would let a second
 * process lock a fresh inode under the same name.
 */
import {
  chmodSync,
  closeSync,
  constants,
  fchmodSync,
  fstatSync,
  mkdirSync,
  openSync,
  statSync,
} from "node:fs";
import { join, resolve } from "node:path";
import { UsageError } from "../../problems/errors.js";

import { DEFAULT_LOCK_DIR } from "./default-lock-dir.js";

export { DEFAULT_LOCK_DIR } from "./default-lock-dir.js";

/** The directory given (the CLI resolves --lock-dir and GPUPLAN_LOCK_DIR), else the default; always absolute. */
export function resolveLockDir(dir?: string): string {
  return resolve(dir ?? DEFAULT_LOCK_DIR);
}

/** Create the directory when missing, world-writable and sticky like /tmp (mkdir's mode is cut by umask). */
export function ensureLockDir(dir: string): void {
  try {
    mkdirSync(dir, { mode: 0o1777 });
  } catch (e) {
    if (errorCode(e) === "EEXIST") return;
    if (errorCode(e) !== "ENOENT") throw lockDirError(dir, e);
    // A custom GPUPLAN_LOCK_DIR whose parents are missing: make them with the usual umask.
    try {
      mkdirSync(dir, { recursive: true, mode: 0o1777 });
    } catch (inner) {
      throw lockDirError(dir, inner);
    }
  }
  try {
    chmodSync(dir, 0o1777);
  } catch {
    // Someone else created it between our mkdir and chmod; it is theirs to set.
  }
}

/** GPU UUIDs are file-name safe except old-style MIG ids (`MIG-GPU-…/1/0`); escape anything else. */
function encodeUuid(uuid: string): string {
  return uuid.replace(/[^A-Za-z0-9_-]/g, (c) => `%${c.charCodeAt(0).toString(16).padStart(2, "0")}`);
}

function decodeUuid(name: string): string {
  return name.replace(/%([0-9a-f]{2})/g, (_, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

export const gatePath = (dir: string, uuid: string): string => join(dir, `${encodeUuid(uuid)}.gate.lock`);
export const slotPath = (dir: string, uuid: string, slot: number): string =>
  join(dir, `${encodeUuid(uuid)}.slot${slot}.lock`);
export const infoPath = (dir: string, uuid: string, slot: number): string =>
  join(dir, `${encodeUuid(uuid)}.slot${slot}.json`);

const SLOT_FILE = /^(.+)\.slot(\d+)\.lock$/;

/** The GPU and slot a directory entry is the lock file of, or null. */
export function parseSlotFile(name: string): { uuid: string; slot: number } | null {
  const m = SLOT_FILE.exec(name);
  return m ? { uuid: decodeUuid(m[1]!), slot: Number(m[2]) } : null;
}

// O_NOFOLLOW and a regular-file check: another user of a world-writable directory could plant a
// symlink (to our ~/.bashrc) or a FIFO (whose open would hang) under a name we use.
// O_NONBLOCK only matters for such a FIFO; regular files ignore it.
const SAFE = constants.O_NOFOLLOW | constants.O_NONBLOCK;

/**
 * Open (creating if needed) a lock or info file. Opening an existing file never passes O_CREAT:
 * with fs.protected_regular, O_CREAT on another user's file in a sticky directory is EACCES even
 * when nothing would be created. A new file is made 0666 (fchmod, as umask trims the open mode)
 * so every user can later open it for writing.
 */
export function openShared(path: string, access: "read" | "write"): number {
  const base = (access === "read" ? constants.O_RDONLY : constants.O_WRONLY) | SAFE;
  for (let attempt = 0; ; attempt++) {
    try {
      return checkRegular(openSync(path, base), path);
    } catch (e) {
      if (errorCode(e) !== "ENOENT" || attempt > 3) throw lockFileError(path, e);
    }
    try {
      const fd = checkRegular(openSync(path, base | constants.O_CREAT | constants.O_EXCL, 0o666), path);
      fchmodSync(fd, 0o666);
      return fd;
    } catch (e) {
      // EEXIST: another process created it first; open theirs.
      if (errorCode(e) !== "EEXIST") throw lockFileError(path, e);
    }
  }
}

/** Open an existing file for reading (inspect); null when it is missing or not a regular file. */
export function openExisting(path: string): number | null {
  try {
    return checkRegular(openSync(path, constants.O_RDONLY | SAFE), path);
  } catch {
    return null;
  }
}

/**
 * Whether `fd` is still the file at `path`. We never delete lock files, but a /tmp cleaner may:
 * a lock taken on an unlinked inode would exclude nobody who opens the name afresh.
 */
export function isStillLinked(fd: number, path: string): boolean {
  try {
    const open = fstatSync(fd);
    const named = statSync(path);
    return open.ino === named.ino && open.dev === named.dev;
  } catch {
    return false;
  }
}

function checkRegular(fd: number, path: string): number {
  if (fstatSync(fd).isFile()) return fd;
  closeSync(fd);
  throw new UsageError(`${path} is not a regular file`, "lock-file-not-regular", lockHint(path));
}

function errorCode(e: unknown): string | undefined {
  return typeof e === "object" && e !== null && "code" in e ? String(e.code) : undefined;
}

function lockDirError(dir: string, e: unknown): Error {
  return new UsageError(
    `cannot create the GPU lock directory ${dir}: ${e instanceof Error ? e.message : String(e)}`,
    "lock-dir",
    lockHint(dir),
  );
}

function lockFileError(path: string, e: unknown): Error {
  if (e instanceof UsageError) return e;
  return new UsageError(
    `cannot open the GPU lock file ${path}: ${e instanceof Error ? e.message : String(e)}`,
    "lock-file",
    lockHint(path),
  );
}

const lockHint = (path: string): string =>
  `every gpuplan user must be able to write the lock directory: set GPUPLAN_LOCK_DIR, or ask its owner to \`chmod 1777\` it (${path})`;
