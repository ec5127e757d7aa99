/**
 * `gpuplan locks init`: the one-time admin set-up of a shared server. Root creates the shared
 * lock directory, root-owned and writable by root alone (so no user can delete, replace or plant
 * a lock file), and one root-owned lock file per GPU that every user (or the group given) can open
 * for locking. Each user's gpuplan then finds the directory by default and shares GPUs with the
 * others (docs/guides/locks.md).
 */
import { chmodSync, chownSync, closeSync, fchmodSync, fchownSync, lstatSync, mkdirSync } from "node:fs";
import { UsageError } from "../../problems/errors.js";
import { gpuLockPath, openGpuLock } from "./lock-dir.js";

export interface InitResult {
  dir: string;
  files: { uuid: string; path: string }[];
}

/** Create (or bring back in shape) the shared directory and a lock file for each GPU. Root only. */
export function initLockDir(dir: string, uuids: readonly string[], gid: number | null): InitResult {
  if ((process.geteuid?.() ?? 0) !== 0)
    throw new UsageError(
      "gpuplan locks init sets up the shared lock directory, owned by root: run it as root",
      "lock-dir",
      "sudo gpuplan locks init [--group GROUP]",
    );
  try {
    if (lstatSync(dir).isSymbolicLink())
      throw new UsageError(
        `${dir} is a symlink; the shared lock directory must be a real directory`,
        "lock-dir-untrusted",
        `remove it and run gpuplan locks init again`,
      );
  } catch (e) {
    if (e instanceof UsageError) throw e;
    mkdirSync(dir, { recursive: true, mode: 0o755 });
  }
  // Writable by root only; with a group, only its members may enter.
  chownSync(dir, 0, gid ?? 0);
  chmodSync(dir, gid === null ? 0o755 : 0o750);
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
  return { dir, files };
}
