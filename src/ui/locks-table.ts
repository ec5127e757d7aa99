/**
 * `gpuplan locks` for a person: one row per GPU slot (who holds it, since when), then the warm
 * workers. Everything in these rows was read from files in the shared lock directory, which any
 * user can write: every string is escaped before it is shown. Pure: `now` and `running` come from
 * the caller (tests pin them).
 */
import type { HolderInfo, SlotState } from "../run/lock/types.js";
import type { WarmWorkerState } from "../run/warm/worker-info.js";
import { escapeText } from "../text/safe-text.js";
import { formatDuration } from "../units/duration.js";
import { noPaint, type Paint } from "./paint.js";
import { shortUuids } from "./short-uuid.js";
import { formatTable, type TableColumn } from "./table.js";

const SLOT_COLUMNS: TableColumn[] = [
  { header: "GPU" },
  { header: "UUID" },
  { header: "SLOT", align: "right" },
  { header: "STATE" },
  { header: "PID" },
  { header: "PIPELINE" },
  { header: "STEP" },
  { header: "SINCE" },
  { header: "HELD FOR", align: "right" },
];

/** The slots table and a count line; `running` says whether a holder's gpuplan still runs. */
export function formatLocks(
  dir: string,
  slots: readonly SlotState[],
  now: number,
  running: (holder: HolderInfo) => boolean,
  paint: Paint = noPaint,
): string {
  if (slots.length === 0) return `No GPU slot locks in ${escapeText(dir)}.\n`;
  const short = shortUuids(slots.map((s) => s.uuid));
  const rows = slots.map((s) => {
    const h = s.holder;
    const gpu = s.gpu === null ? "?" : escapeText(s.gpu);
    const state = s.held ? paint.yellow("held") : paint.green("free");
    if (!h) return [gpu, short(s.uuid), String(s.slot), state, s.held ? "?" : ""];
    return [
      gpu,
      short(s.uuid),
      String(s.slot),
      state,
      // Held while its gpuplan is gone: a step that inherited the slot still runs.
      running(h) ? String(h.pid) : `${h.pid} (exited)`,
      escapeText(h.pipeline),
      h.step === null ? "" : escapeText(h.step),
      formatSince(h.since),
      heldFor(h.since, now),
    ];
  });
  const held = slots.filter((s) => s.held).length;
  const table = formatTable(SLOT_COLUMNS, rows, { paint }).join("\n");
  return `${table}\n\n${held} of ${slots.length} slots held (${escapeText(dir)}).\n`;
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
