/**
 * `gpuplan locks`: which GPU slots are held, by whom, since when. It only looks (a non-blocking
 * LOCK_SH probe per slot) and never takes or cleans anything: a slot whose holder died is already
 * free, because the kernel drops a flock with the last descriptor that held it.
 */
import { hostname } from "node:os";
import { UsageError } from "../../problems/errors.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";
import type { HolderInfo } from "../../run/lock/types.js";
import type { GpuplanLocks } from "../../schema-types/locks.js";
import { formatLocks, formatWarmWorkers } from "../../ui/locks-table.js";
import { writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export default async function locks(options: { json?: boolean; lockDir: string }): Promise<number> {
  await checkLockDir(options.lockDir);
  const { createSlotLock } = await import("../../run/lock/index.js");
  const lock = createSlotLock({ dir: options.lockDir });
  const { readWarmWorkers } = await import("../../run/warm/worker-info.js");
  const slots = await lock.inspect();
  const workers = readWarmWorkers(lock.dir, (pid) =>
    isRunning({ pid, run: "", pipeline: "", step: null, since: "" }),
  );
  if (options.json) {
    const out: GpuplanLocks = { schema: "gpuplan/locks@1", dir: lock.dir, slots, workers };
    writeOut(`${JSON.stringify(out, null, 2)}\n`);
  } else {
    const paint = await paintFor(process.stdout);
    const now = Date.now();
    writeOut(formatLocks(lock.dir, slots, now, isRunning, paint) + formatWarmWorkers(workers, now, paint));
  }
  return 0;
}

/**
 * A missing lock directory only means no gpuplan has locked a GPU here yet; a file in its place
 * (or one that cannot be read) is a mistake in --lock-dir / GPUPLAN_LOCK_DIR, not an empty list.
 */
async function checkLockDir(dir: string): Promise<void> {
  const { readdir } = await import("node:fs/promises");
  await readdir(dir).catch((e: unknown) => {
    if (errnoOf(e) === "ENOENT") return;
    const { message, hint } = fileError(e, dir, "read", "lock directory");
    throw new UsageError(message, "lock-dir", hint);
  });
}

/** Whether the holder's gpuplan still runs (EPERM: it does, as another user); unknown elsewhere: yes. */
function isRunning(holder: HolderInfo): boolean {
  if (holder.host !== undefined && holder.host !== hostname()) return true;
  try {
    process.kill(holder.pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === "EPERM";
  }
}
