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

/** The system directory when it exists (in any form: trust is checked where it is used), else the private one. */
export function defaultLockDir(): string {
  try {
    lstatSync(SYSTEM_LOCK_DIR);
    return SYSTEM_LOCK_DIR;
  } catch {
    return privateLockDir();
  }
}
