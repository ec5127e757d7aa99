/**
 * Warm workers as `gpuplan locks` sees them: each gpuplan process with warm workers keeps one
 * small JSON file, `warm.<pid>.<random>.json`, in the lock directory beside the slot files. Like
 * the slot info files it is only a label (the slot flocks are the truth): a file whose gpuplan or
 * worker processes are gone (kill -9 leaves it behind) is ignored, never trusted.
 * The shared directory `locks init` makes is root's alone (0755): a gpuplan that cannot write it
 * writes to its `warm/` folder (root's, sticky, 1777) instead, and `gpuplan locks` reads both.
 * Where others may write (warm/, an older 1777 lock directory) any user can plant a file: only a
 * regular file of at most MAX_INFO_BYTES with the exact shape below is read (a FIFO, a link to
 * /dev/zero, a huge or malformed file is skipped), and only when its owner is root or the user
 * who runs the gpuplan it names. The random part of the name is why a planted file cannot be in
 * the way: under the bare pid another user could create `warm.<pid>.json` first (pids are
 * guessable) and the sticky bit then refused that gpuplan's rename, so its workers went unlisted.
 */

import {
  accessSync,
  closeSync,
  constants,
  fstatSync,
  lstatSync,
  openSync,
  readdirSync,
  readSync,
  renameSync,
  rmSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from "node:fs";
import { hostname } from "node:os";
import { basename, dirname, join } from "node:path";
import type { LockWarmWorker } from "../../schema-types/locks.js";
import { randomHex } from "../../text/random-hex.js";
import { escapeText } from "../../text/safe-text.js";
import { distrustOf, type FolderDistrust } from "../lock/folder-trust.js";
import { ownerName, warmFolderPath } from "../lock/lock-dir.js";
import type { WarmWorkerInfo } from "./worker-pool.js";

/** One warm worker in `gpuplan locks --json` (`workers[]`), as schemas/locks.schema.json defines it. */
export type WarmWorkerState = LockWarmWorker;

interface WarmInfoFile {
  pid: number;
  host: string;
  run: string;
  workers: { key: string; gpu: string; pid: number | null; busy: boolean; idleSince: string | null }[];
}

/**
 * A record's name: `warm.<pid>.<random hex>.json`, or `warm.<pid>.json` as gpuplan wrote it before
 * the random part (an older gpuplan may still run against the same lock directory during an
 * upgrade). The name decides nothing: a record is believed by its owner (isOwnersRecord).
 */
const FILE = /^warm\.\d+(?:\.[0-9a-f]+)?\.json$/;

/**
 * This process's record writer: each call rewrites its file (or removes it when no worker is
 * left). Best effort, a label never fails a run; but the first time it cannot be written,
 * `onUnwritten` hears why (once), since `gpuplan locks` will then not list this run's workers.
 */
export function createWarmInfoWriter(
  lockDir: string,
  run: string,
  onUnwritten: (why: string) => void,
): (workers: readonly WarmWorkerInfo[]) => void {
  // Unguessable (/dev/urandom), so no other user can create a file at it before this process does.
  const name = `warm.${process.pid}.${randomHex(8)}.json`;
  /** Where the file goes, chosen at the first write; null until then. */
  let folder: string | null = null;
  let written = false;
  let told = false;
  return (workers) => {
    try {
      if (workers.length === 0) {
        if (written && folder !== null) unlinkSync(join(folder, name));
        written = false;
        return;
      }
      folder ??= chooseFolder(lockDir);
      writeNewFile(join(folder, name), infoText(run, workers));
      written = true;
    } catch (e) {
      if (told) return;
      told = true;
      onUnwritten(
        `warm workers of this run will not be listed by \`gpuplan locks\`: ${e instanceof WhyNot ? e.message : `cannot write ${escapeText(join(folder ?? lockDir, name))} (${errorCode(e)})`}`,
      );
    }
  };
}

class WhyNot extends Error {}

/**
 * The lock directory where this user may write it (a private one, root's own run, an older 1777
 * shared one); else its `warm/` folder, when that is one to trust (folder-trust.ts distrustOf).
 */
function chooseFolder(lockDir: string): string {
  if (isWritable(lockDir)) return lockDir;
  const warm = warmFolderPath(lockDir);
  let why: string | null;
  try {
    const st = lstatSync(warm);
    why = folderDistrustWords(distrustOf(st), st.uid);
  } catch (e) {
    if (errorCode(e) !== "ENOENT") throw e;
    throw new WhyNot(
      `the lock directory ${escapeText(lockDir)} is not yours to write and has no warm/ folder (an older set-up): an admin can add it with \`sudo gpuplan locks init\``,
    );
  }
  if (why !== null) throw new WhyNot(`${escapeText(warm)} ${why}; gpuplan does not write there`);
  if (!isWritable(warm))
    throw new WhyNot(
      `${escapeText(warm)} is not writable by you (an admin's \`gpuplan locks init\` makes it so)`,
    );
  return warm;
}

/** access(2) asks with the real uid, which is gpuplan's (it is never setuid). */
function isWritable(path: string): boolean {
  try {
    accessSync(path, constants.W_OK);
    return true;
  } catch {
    return false;
  }
}

/** A few words for why a folder is not one to trust, or null when it is. */
function folderDistrustWords(distrust: FolderDistrust | null, uid: number): string | null {
  switch (distrust) {
    case null:
      return null;
    case "symlink":
      return "is a symbolic link";
    case "not-directory":
      return "is not a directory";
    case "owner":
      return `is owned by ${escapeText(ownerName(uid))}, not by you or root`;
    case "others-write":
      return "is writable by others without the sticky bit";
  }
}

const errorCode = (e: unknown): string => (e as NodeJS.ErrnoException).code ?? String(e);

function infoText(run: string, workers: readonly WarmWorkerInfo[]): string {
  const file: WarmInfoFile = {
    pid: process.pid,
    host: hostname(),
    run,
    workers: workers.map((w) => ({
      key: w.key,
      gpu: w.device,
      pid: w.pid,
      busy: w.busy,
      idleSince: w.idleSince === null ? null : new Date(w.idleSince).toISOString(),
    })),
  };
  return `${JSON.stringify(file)}\n`;
}

/**
 * Write `path` as a new file of ours: a fresh temporary name (O_EXCL: never an existing file or a
 * link) renamed over it, so a reader never sees half a record. Writing `path` itself followed
 * whatever was there in a directory anyone may write (1777): a link to this user's ~/.bashrc was
 * overwritten with JSON.
 */
function writeNewFile(path: string, text: string): void {
  const temp = `${dirname(path)}/.${basename(path)}.${randomHex(6)}`;
  writeFileSync(temp, text, { mode: 0o644, flag: "wx" });
  try {
    renameSync(temp, path);
  } catch (e) {
    rmSync(temp, { force: true });
    throw e;
  }
}

/** Far above what a gpuplan with thousands of warm workers writes. */
export const MAX_INFO_BYTES = 4 * 1024 * 1024;

/**
 * Every live warm worker recorded in the lock directory and its `warm/` folder, by GPU then key.
 * A file (or a warm/ folder) that is not readable as one of ours is passed to `onSkip` (its path
 * and why) and otherwise ignored.
 */
export function readWarmWorkers(
  dir: string,
  isAlive: (pid: number) => boolean,
  onSkip?: (path: string, reason: string) => void,
): WarmWorkerState[] {
  // One record per gpuplan pid, the newest: a record a killed gpuplan left behind stays under its
  // own random name, and a later gpuplan of the same user may be given the same pid.
  const newest = new Map<number, { file: WarmInfoFile; modified: number }>();
  for (const folder of [dir, ...trustedWarmFolder(dir, onSkip)]) {
    let names: string[];
    try {
      names = readdirSync(folder);
    } catch {
      continue;
    }
    for (const name of names) {
      if (!FILE.test(name)) continue;
      const path = join(folder, name);
      const read = readInfoFile(path);
      if (typeof read === "string") {
        onSkip?.(path, read); // Half-written, planted or not ours.
        continue;
      }
      const { file, owner, modified } = read;
      if (file.host !== hostname() || !isAlive(file.pid)) continue;
      // Anyone may write warm/: a record naming another user's live gpuplan is hers only when she
      // (or root) owns the file. Without this a planted record stood in for hers, or hid it.
      const notOwners = ownerDistrust(file.pid, owner);
      if (notOwners !== null) {
        onSkip?.(path, notOwners);
        continue;
      }
      if ((newest.get(file.pid)?.modified ?? -1) < modified) newest.set(file.pid, { file, modified });
    }
  }
  const out: WarmWorkerState[] = [];
  for (const { file } of newest.values())
    for (const w of file.workers) {
      if (w.pid !== null && !isAlive(w.pid)) continue;
      out.push({
        key: w.key,
        gpu: w.gpu,
        pid: w.pid,
        gpuplanPid: file.pid,
        run: file.run,
        busy: w.busy,
        idleSince: w.idleSince,
      });
    }
  return out.sort((a, b) => a.gpu.localeCompare(b.gpu) || a.key.localeCompare(b.key));
}

/** `[dir/warm]` when it exists and is one to trust; none otherwise (an untrusted one told to onSkip). */
function trustedWarmFolder(dir: string, onSkip?: (path: string, reason: string) => void): string[] {
  const warm = warmFolderPath(dir);
  try {
    const st = lstatSync(warm);
    const why = folderDistrustWords(distrustOf(st), st.uid);
    if (why === null) return [warm];
    onSkip?.(warm, why.replace(/^is /, ""));
  } catch {
    // No warm/ folder: a private directory, or a shared one set up before it existed.
  }
  return [];
}

/**
 * Why a record of gpuplan `pid` owned by `owner` is not hers, or null when it is: the file must be
 * root's or owned by the user who runs that process (/proc/PID's owner). Where the process's owner
 * cannot be seen (no /proc, hidepid, or it just ended) only root's and this reader's own files are
 * believed: those no other user could have planted.
 */
function ownerDistrust(pid: number, owner: number): string | null {
  if (owner === 0) return null;
  let runner: number | null = null;
  try {
    runner = statSync(`/proc/${pid}`).uid;
  } catch {
    if (owner === process.geteuid?.()) return null;
  }
  if (owner === runner) return null;
  return runner === null
    ? `owned by ${escapeText(ownerName(owner))}, and who runs process ${pid} cannot be seen`
    : `owned by ${escapeText(ownerName(owner))}, not by ${escapeText(ownerName(runner))} who runs process ${pid}`;
}

/**
 * The parsed file, its owner and when it was written, or why not: it must be a regular file (not followed through a
 * link; O_NONBLOCK so a FIFO does not wait for a writer) of at most MAX_INFO_BYTES with a valid shape.
 */
function readInfoFile(path: string): { file: WarmInfoFile; owner: number; modified: number } | string {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ELOOP" ? "a symbolic link" : `cannot be opened (${code ?? String(e)})`;
  }
  const tooBig = `larger than ${MAX_INFO_BYTES / (1024 * 1024)} MiB`;
  try {
    const stat = fstatSync(fd);
    if (!stat.isFile()) return "not a regular file";
    if (stat.size > MAX_INFO_BYTES) return tooBig;
    // One byte more than the cap: a file that grew since fstat is refused too.
    const buffer = Buffer.alloc(Math.min(stat.size, MAX_INFO_BYTES) + 1);
    let length = 0;
    for (let n = 1; n > 0 && length < buffer.length; length += n)
      n = readSync(fd, buffer, length, buffer.length - length, null);
    if (length > MAX_INFO_BYTES) return tooBig;
    const data: unknown = JSON.parse(buffer.toString("utf8", 0, length));
    return isWarmInfoFile(data)
      ? { file: data, owner: stat.uid, modified: stat.mtimeMs }
      : "not a warm-worker record";
  } catch {
    return "not JSON (or being written)";
  } finally {
    closeSync(fd);
  }
}

const isObject = (v: unknown): v is Record<string, unknown> =>
  typeof v === "object" && v !== null && !Array.isArray(v);
const isPid = (v: unknown): v is number => Number.isSafeInteger(v) && (v as number) > 0;
const isTime = (v: unknown): v is string => typeof v === "string" && !Number.isNaN(Date.parse(v));

/** What createWarmInfoWriter writes, and nothing else (schemas/locks.schema.json forbids other keys). */
function isWarmInfoFile(v: unknown): v is WarmInfoFile {
  return (
    isObject(v) &&
    isPid(v.pid) &&
    typeof v.host === "string" &&
    typeof v.run === "string" &&
    Array.isArray(v.workers) &&
    v.workers.every(
      (w) =>
        isObject(w) &&
        Object.keys(w).every((k) => WORKER_KEYS.has(k)) &&
        typeof w.key === "string" &&
        typeof w.gpu === "string" &&
        (w.pid === null || isPid(w.pid)) &&
        typeof w.busy === "boolean" &&
        (w.idleSince === null || isTime(w.idleSince)),
    )
  );
}

const WORKER_KEYS = new Set(["key", "gpu", "pid", "busy", "idleSince"]);
