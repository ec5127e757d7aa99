/**
 * `gpuplan locks`: which GPU slots are held, by whom, since when. It only looks (a non-blocking
 * LOCK_SH probe per slot) and never takes or cleans anything: a slot whose holder died is already
 * free, because the kernel drops a flock with the last descriptor that held it.
 */
import { hostname } from "node:os";
import type { HolderInfo, SlotState } from "../../run/lock/types.js";
import type { WarmWorkerState } from "../../run/warm/worker-info.js";
import type { GpuplanLocks } from "../../schema-types/locks.js";
import { formatDuration } from "../../units/duration.js";
import { writeOut } from "../output.js";

export default async function locks(options: { json?: boolean }): Promise<number> {
  const { createSlotLock } = await import("../../run/lock/index.js");
  const lock = createSlotLock();
  const { readWarmWorkers } = await import("../../run/warm/worker-info.js");
  const slots = await lock.inspect();
  const workers = readWarmWorkers(lock.dir, (pid) =>
    isRunning({ pid, run: "", pipeline: "", step: null, since: "" }),
  );
  if (options.json) {
    const out: GpuplanLocks = { schema: "gpuplan/locks@1", dir: lock.dir, slots, workers };
    writeOut(`${JSON.stringify(out, null, 2)}\n`);
  } else
    writeOut(formatLocks(lock.dir, slots, Date.now(), isRunning) + formatWarmWorkers(workers, Date.now()));
  return 0;
}

/** The warm workers table (empty text when there are none). Pure, like formatLocks. */
export function formatWarmWorkers(workers: readonly WarmWorkerState[], now: number): string {
  if (workers.length === 0) return "";
  const header = ["GPU", "KEY", "PID", "GPUPLAN", "RUN", "STATE", "IDLE FOR"];
  const rows = workers.map((w) => {
    const since = w.idleSince === null ? Number.NaN : Date.parse(w.idleSince);
    return [
      w.gpu,
      w.key,
      w.pid === null ? "?" : String(w.pid),
      String(w.gpuplanPid),
      w.run,
      w.busy ? "busy" : w.idleSince === null ? "loading" : "idle",
      Number.isNaN(since) ? "" : formatDuration(Math.max(0, Math.round((now - since) / 1000) * 1000)),
    ];
  });
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const lines = table.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd(),
  );
  return `\nWarm workers (each keeps the slot it was started in):\n${lines.join("\n")}\n`;
}

/** The human table: one row per slot. Pure: `now` and `running` come from the caller (tests pin them). */
export function formatLocks(
  dir: string,
  slots: readonly SlotState[],
  now: number,
  running: (holder: HolderInfo) => boolean,
): string {
  if (slots.length === 0) return `No GPU slot locks in ${dir}.\n`;
  const header = ["GPU", "UUID", "SLOT", "STATE", "PID", "PIPELINE", "STEP", "SINCE", "HELD FOR"];
  const rows = slots.map((s) => {
    const h = s.holder;
    const state = s.held ? "held" : "free";
    if (!h)
      return [s.gpu ?? "?", shortUuid(s.uuid), String(s.slot), state, s.held ? "?" : "", "", "", "", ""];
    const since = Date.parse(h.since);
    return [
      s.gpu ?? "?",
      shortUuid(s.uuid),
      String(s.slot),
      state,
      // Held while its gpuplan is gone: a step that inherited the slot still runs.
      running(h) ? String(h.pid) : `${h.pid} (exited)`,
      h.pipeline,
      h.step ?? "",
      Number.isNaN(since)
        ? h.since
        : new Date(since)
            .toISOString()
            .replace("T", " ")
            .replace(/\.\d+Z$/, "Z"),
      Number.isNaN(since) ? "" : formatDuration(Math.max(0, Math.round((now - since) / 1000) * 1000)),
    ];
  });
  const table = [header, ...rows];
  const widths = header.map((_, i) => Math.max(...table.map((r) => r[i]!.length)));
  const lines = table.map((r) =>
    r
      .map((c, i) => c.padEnd(widths[i]!))
      .join("  ")
      .trimEnd(),
  );
  const held = slots.filter((s) => s.held).length;
  return `${lines.join("\n")}\n\n${held} of ${slots.length} slots held (${dir}).\n`;
}

/** GPU-1a2b3c4d… : enough to tell GPUs apart in a table; --json has the full UUID. */
function shortUuid(uuid: string): string {
  return uuid.length > 13 ? `${uuid.slice(0, 12)}…` : uuid;
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
