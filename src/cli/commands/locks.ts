/**
 * `gpuplan locks`: which GPU slots are held now, by whom, with how much memory, and who waits.
 * It only looks (F_OFD_GETLK through a descriptor that holds nothing) and never takes or cleans
 * anything: a slot whose holder died is already free, because the kernel drops an OFD lock with
 * the last descriptor that held it.
 */
import { hostname } from "node:os";
import type { HolderInfo } from "../../run/lock/types.js";
import type { GpuplanLocks } from "../../schema-types/locks.js";
import { jsonText } from "../../text/json-text.js";
import { formatLocks, formatWarmWorkers } from "../../ui/locks-table.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export default async function locks(options: { json?: boolean; lockDir: string }): Promise<number> {
  const { countOtherProcesses, createSlotLock } = await import("../../run/lock/index.js");
  const lock = createSlotLock({ dir: options.lockDir });
  // Refuses (exit 2) a directory another user could tamper with; a missing one has no locks yet.
  const mode = lock.mode() ?? "private";
  const gpus = await lock.inspectGpus();
  // What processes gpuplan did not start hold, where a GPU has a lock file and its driver answers.
  if (gpus.length > 0) {
    const { readForeignMemory } = await import("../../run/foreign-memory.js");
    const foreign = await readForeignMemory(
      gpus.flatMap((g) => g.slots),
      process.env,
    );
    for (const g of gpus) {
      const other = foreign.get(g.uuid);
      if (other !== undefined) countOtherProcesses(g, other);
    }
  }
  const { readWarmWorkers } = await import("../../run/warm/worker-info.js");
  const workers = readWarmWorkers(
    lock.dir,
    (pid) => isRunning({ pid, run: "", pipeline: "", step: null, since: "" }),
    (path, reason) => writeErr(`gpuplan: ignored ${path}: ${reason}\n`),
  );
  if (options.json) {
    const out: GpuplanLocks = { schema: "gpuplan/locks@2", dir: lock.dir, mode, gpus, workers };
    writeOut(`${jsonText(out, 2)}\n`);
  } else {
    const paint = await paintFor("stdout");
    const now = Date.now();
    writeOut(
      formatLocks(lock.dir, mode, gpus, now, isRunning, paint) + formatWarmWorkers(workers, now, paint),
    );
  }
  return 0;
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
