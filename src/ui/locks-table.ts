/**
 * `gpuplan locks` for a person: the lock directory's mode, one row per held GPU slot (who holds it,
 * the memory it reserved, since when), a line per GPU with its free budget and waiters, then the
 * warm workers. Everything in these rows was read from files in the shared lock directory, which any
 * user can write: every string is escaped before it is shown. Pure: `now` and `running` come from
 * the caller (tests pin them).
 */
import type { GpuState, HolderInfo } from "../run/lock/types.js";
import type { WarmWorkerState } from "../run/warm/worker-info.js";
import { escapeText } from "../text/safe-text.js";
import { formatDuration } from "../units/duration.js";
import { formatSize } from "../units/size.js";
import { noPaint, type Paint } from "./paint.js";
import { shortUuids } from "./short-uuid.js";
import { formatTable, type TableColumn } from "./table.js";

const SLOT_COLUMNS: TableColumn[] = [
  { header: "GPU" },
  { header: "UUID" },
  { header: "SLOT", align: "right" },
  { header: "PID" },
  { header: "PIPELINE" },
  { header: "STEP" },
  { header: "RESERVED", align: "right" },
  { header: "SINCE" },
  { header: "HELD FOR", align: "right" },
];

/**
 * The lock state now: the directory and its mode, one row per held slot (GPUs in index order),
 * and per GPU a line with the memory reserved, the free budget and the waiters.
 * `running` says whether a recorded gpuplan still runs.
 */
export function formatLocks(
  dir: string,
  mode: "shared" | "private",
  gpus: readonly GpuState[],
  now: number,
  running: (holder: HolderInfo) => boolean,
  paint: Paint = noPaint,
): string {
  const where =
    mode === "shared"
      ? `Lock directory ${escapeText(dir)}: shared by every user's gpuplan.\n`
      : `Lock directory ${escapeText(dir)}: private to you; other users' gpuplans do not see these locks (an admin shares GPUs with \`sudo gpuplan locks init\`).\n`;
  const active = gpus.filter((g) => g.slots.length > 0 || g.waiters > 0);
  if (active.length === 0) return `${where}No GPU slot is held.\n`;
  const short = shortUuids(gpus.map((g) => g.uuid));
  const rows: string[][] = [];
  for (const g of active) {
    for (const s of g.slots) {
      const h = s.holder;
      const gpu = s.gpu === null ? "?" : escapeText(s.gpu);
      const slot = s.exclusive ? `${s.slot}${paint.yellow("*")}` : String(s.slot);
      if (!h) {
        rows.push([gpu, short(s.uuid), slot, "?", "", "", formatSize(s.reservedBytes)]);
        continue;
      }
      rows.push([
        gpu,
        short(s.uuid),
        slot,
        holderPid(h, running),
        escapeText(h.pipeline),
        h.step === null ? "" : escapeText(h.step),
        s.reservedBytes > 0 || !s.exclusive ? formatSize(s.reservedBytes) : "",
        formatSince(h.since),
        heldFor(h.since, now),
      ]);
    }
  }
  const table = rows.length > 0 ? `${formatTable(SLOT_COLUMNS, rows, { paint }).join("\n")}\n\n` : "";
  const lines = active.map((g) => {
    const gpu = g.gpu === null ? short(g.uuid) : escapeText(g.gpu);
    // While an exclusive step has the GPU, the budget its reservation leaves is no one else's.
    const free = g.availableBytes === 0 ? "none free" : `${formatSize(Math.max(0, g.freeBytes ?? 0))} free`;
    const memory =
      g.budgetBytes === null
        ? `${formatSize(g.reservedBytes)} reserved`
        : `${formatSize(g.reservedBytes)} of ${formatSize(g.budgetBytes)} reserved, ${free}`;
    const others =
      g.otherProcessesBytes === undefined ? "" : `, other processes: ${formatSize(g.otherProcessesBytes)}`;
    const exclusive = g.slots.some((s) => s.exclusive) ? " (* exclusive: the whole GPU)" : "";
    const held = `${g.slots.length} ${g.slots.length === 1 ? "slot" : "slots"} held`;
    return `${gpu}: ${held}${exclusive}, ${memory}${others}, ${g.waiters} waiting\n`;
  });
  return `${where}${table}${lines.join("")}`;
}

/** The pid to name: confirmed by the kernel, a step holding it for a gpuplan, or only what the record says. */
function holderPid(h: HolderInfo, running: (holder: HolderInfo) => boolean): string {
  if (h.startedBy !== undefined)
    return `${h.pid} (step of gpuplan ${h.startedBy}${running({ ...h, pid: h.startedBy }) ? "" : ", exited"})`;
  if (h.verified === false) return `${h.pid} (${running(h) ? "unverified" : "exited"})`;
  return running(h) ? String(h.pid) : `${h.pid} (exited)`;
}

const WORKER_COLUMNS: TableColumn[] = [
  { header: "GPU" },
  { header: "KEY" },
  { header: "PID" },
  { header: "GPUPLAN" },
  { header: "RUN" },
  { header: "STATE" },
  { header: "IDLE FOR", align: "right" },
];

/** The warm workers table (empty text when there are none). */
export function formatWarmWorkers(
  workers: readonly WarmWorkerState[],
  now: number,
  paint: Paint = noPaint,
): string {
  if (workers.length === 0) return "";
  const rows = workers.map((w) => [
    escapeText(w.gpu),
    escapeText(w.key),
    w.pid === null ? "?" : String(w.pid),
    String(w.gpuplanPid),
    escapeText(w.run),
    w.busy ? "busy" : w.idleSince === null ? "loading" : "idle",
    w.idleSince === null ? "" : heldFor(w.idleSince, now),
  ]);
  const table = formatTable(WORKER_COLUMNS, rows, { paint }).join("\n");
  return `\nWarm workers (each keeps the slot it was started in):\n${table}\n`;
}

/** `2026-01-02 03:04:05Z`, or the text as it was found when it is not a time. */
function formatSince(since: string): string {
  const ms = Date.parse(since);
  if (Number.isNaN(ms)) return escapeText(since);
  return new Date(ms)
    .toISOString()
    .replace("T", " ")
    .replace(/\.\d+Z$/, "Z");
}

/** Whole seconds from `since` to `now` ("" when `since` is not a time). */
function heldFor(since: string, now: number): string {
  const ms = Date.parse(since);
  if (Number.isNaN(ms)) return "";
  return formatDuration(Math.max(0, Math.round((now - ms) / 1000) * 1000));
}
