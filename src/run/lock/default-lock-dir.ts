/**
 * Where the lock directory is when none is named. A shared server is set up once by an admin
 * (`sudo gpuplan locks init`): SYSTEM_LOCK_DIR then exists, root-owned, and every user's gpuplan
 * shares it. Without it each user gets a private directory, so no other user can plant, replace or
 * delete its lock files — and gpuplans of different users do not see each other (`gpuplan locks`
 * says so). A module of its own, with node:fs only, because the CLI resolves it at every start.
 */
import { lstatSync } from "node:fs";

/** The shared directory `gpuplan locks init` creates: persistent (not /run), root-owned. */
export const SYSTEM_LOCK_DIR = "/var/lib/gpuplan/locks";

/** How --help names the default. */
export const DEFAULT_LOCK_DIR_TEXT = `${SYSTEM_LOCK_DIR} when set up (gpuplan locks init), else /tmp/gpuplan-locks-<uid>`;

/** This user's private directory: /tmp/gpuplan-locks-<uid> (not TMPDIR, which may differ per job). */
export function privateLockDir(): string {
  return `/tmp/gpuplan-locks-${process.geteuid?.() ?? 0}`;
}

/**
 * The system directory unless it is not there (in any form: trust is checked where it is used),
 * else the private one. One this user cannot reach (EACCES: a 0700 folder above it) is the shared
 * one all the same, and its use says why it fails: a private directory in its place would leave
 * this user's runs blind to every other user's slots on the same GPUs.
 */
export function defaultLockDir(system: string = SYSTEM_LOCK_DIR): string {
  try {
    lstatSync(system);
    return system;
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    return code === "ENOENT" || code === "ENOTDIR" ? privateLockDir() : system;
  }
}
