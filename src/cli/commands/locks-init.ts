/**
 * `sudo gpuplan locks init [--group G] [--dir D] [--gpu UUID…]`: set up the shared lock directory
 * (src/run/lock/init-lock-dir.ts) with a lock file for each GPU this machine has (or those named).
 */
import { readFileSync } from "node:fs";
import { UsageError } from "../../problems/errors.js";
import { SYSTEM_LOCK_DIR } from "../../run/lock/default-lock-dir.js";
import { escapeText } from "../../text/safe-text.js";
import { writeOut } from "../output.js";

export interface LocksInitOptions {
  group?: string;
  dir?: string;
  gpu?: string[];
}

export default async function locksInit(options: LocksInitOptions): Promise<number> {
  if (options.dir === "")
    throw new UsageError(
      "--dir is empty",
      "invalid-option-value",
      "name the shared directory, e.g. --dir /var/lib/gpuplan/locks",
    );
  const dir = options.dir ?? SYSTEM_LOCK_DIR;
  const gid = options.group === undefined ? null : groupId(options.group);
  const uuids = options.gpu?.length ? options.gpu.map(checkedUuid) : await detectedGpus();
  const { initLockDir } = await import("../../run/lock/init-lock-dir.js");
  const result = initLockDir(dir, uuids, gid);
  const who = options.group === undefined ? "every user" : `the members of ${escapeText(options.group)}`;
  writeOut(
    `Shared GPU lock directory ${escapeText(result.dir)} (root-owned): ${result.files.length} GPU lock ${result.files.length === 1 ? "file" : "files"}; ${who} can lock them, nobody but root can remove or replace them; their gpuplans list warm workers in ${escapeText(result.warmDir)} (sticky).\n` +
      result.files.map((f) => `  ${escapeText(f.uuid)}\n`).join("") +
      (result.dir === SYSTEM_LOCK_DIR
        ? 'Every user\'s gpuplan now uses it by default; `gpuplan locks` says "shared". Run this again when GPUs change.\n'
        : `gpuplans use it with GPUPLAN_LOCK_DIR=${escapeText(result.dir)}. Run this again when GPUs change.\n`),
  );
  return 0;
}

async function detectedGpus(): Promise<string[]> {
  const { detectInventory } = await import("../../detect/index.js");
  const uuids = (await detectInventory({ cudaOnlyIfNeeded: true })).gpus.map((g) => g.uuid);
  if (uuids.length === 0)
    throw new UsageError(
      "gpuplan locks init found no GPU on this machine",
      "lock-dir",
      "name them: gpuplan locks init --gpu GPU-… (gpuplan detect lists them)",
    );
  return uuids;
}

/** 2³² − 1: the largest gid_t, which chown takes for "no change". */
const MAX_GID = 4_294_967_295;

/** The group's id from /etc/group, or the number given. */
function groupId(name: string): number {
  if (/^\d+$/.test(name)) {
    // 4294967295 is (gid_t)-1, which chown reads as "leave the group": the files stayed root's alone.
    const gid = Number(name);
    if (gid < MAX_GID) return gid;
    throw new UsageError(
      `--group ${escapeText(name)} is not a group id (at most ${MAX_GID - 1})`,
      "invalid-option-value",
      "give a group name from /etc/group, or its number (getent group NAME)",
    );
  }
  let text = "";
  try {
    text = readFileSync("/etc/group", "utf8");
  } catch {
    // Reported below.
  }
  for (const line of text.split("\n")) {
    const [group, , gid] = line.split(":");
    if (group === name && gid !== undefined && /^\d+$/.test(gid)) return Number(gid);
  }
  throw new UsageError(
    `no group named ${escapeText(name)} in /etc/group`,
    "lock-dir",
    "create it (groupadd) or give its number",
  );
}

/**
 * A `--gpu` value as a GPU UUID (GPU-… or MIG-…, as nvidia-smi -L and gpuplan detect print them;
 * AMD's are hex): it names a file in a root-owned directory, so `''`, `.` or `../x` never does.
 */
function checkedUuid(uuid: string): string {
  if (/^(GPU-|MIG-)?[0-9A-Za-z][0-9A-Za-z-]{3,127}$/.test(uuid)) return uuid;
  throw new UsageError(
    `--gpu \`${escapeText(uuid)}\` is not a GPU UUID`,
    "invalid-option-value",
    "name GPUs by UUID, as gpuplan detect lists them (GPU-…, MIG-…)",
  );
}
