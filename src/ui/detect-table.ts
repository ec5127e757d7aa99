/**
 * The human form of an inventory: a GPU table, the CPU, one line per probe, and which
 * variable narrowed the view. Returns text; src/cli prints it. Every string a vendor library,
 * /proc or the environment gave is escaped before it is shown (./escape.ts).
 */

import type { GpuInfo, Inventory, ProbeReport } from "../inventory/types.js";
import { formatDuration } from "../units/duration.js";
import { formatSize } from "../units/size.js";
import { escapeText } from "./escape.js";
import { noPaint, type Paint, type PaintStyle } from "./paint.js";
import { shortUuids } from "./short-uuid.js";
import { formatTable, type TableColumn } from "./table.js";

const STATUS_COLOUR: Record<ProbeReport["status"], PaintStyle> = {
  ok: "green",
  "no-devices": "yellow",
  "not-found": "gray",
  skipped: "gray",
  error: "red",
  timeout: "red",
};

/** Render `inventory`; `notes` are the visibility lines from detection. */
export function formatInventory(
  inventory: Inventory,
  notes: readonly string[],
  paint: Paint = noPaint,
): string {
  const lines: string[] = [];
  const v = inventory.visibility;
  const hidden = v?.hiddenGpus ?? 0;
  const narrowed = v?.narrowedBy.length ? `; narrowed by ${v.narrowedBy.map(escapeText).join(", ")}` : "";
  const physical = inventory.gpus.filter((g) => !g.mig?.parentUuid).length;
  const migs = inventory.gpus.length - physical;
  if (inventory.gpus.length === 0) {
    lines.push(hidden ? `No GPU visible (${hidden} hidden${narrowed}).` : "No GPU found.");
  } else {
    const head = `${physical} GPU${physical === 1 ? "" : "s"}${migs ? ` and ${migs} MIG instance${migs === 1 ? "" : "s"}` : ""}`;
    lines.push(paint.bold(`${head}${hidden ? ` visible (${hidden} hidden${narrowed})` : ""}`));
    lines.push(...gpuTable(inventory.gpus, paint));
  }
  lines.push("");
  const cpu = inventory.cpu;
  const cores =
    cpu.usableCores < cpu.logicalCores
      ? `${cpu.usableCores} of ${cpu.logicalCores} cores usable`
      : `${cpu.logicalCores} cores`;
  const numa = cpu.numaNodes?.length
    ? `, ${cpu.numaNodes.length} NUMA node${cpu.numaNodes.length === 1 ? "" : "s"}`
    : "";
  lines.push(
    `${paint.bold("CPU")}  ${escapeText(cpu.model)}: ${cores}, ${formatSize(cpu.memoryBytes)} memory${numa}`,
  );
  lines.push("");
  lines.push(paint.bold("Probes"));
  const names = inventory.probes.map((p) => escapeText(p.name));
  const width = Math.max(...names.map((n) => n.length));
  inventory.probes.forEach((p, i) => {
    const status = paint[STATUS_COLOUR[p.status]](p.status.padEnd(10));
    const ms = p.durationMs ? ` (${formatDuration(p.durationMs)})` : "";
    const version = p.version ? ` [${escapeText(p.version)}]` : "";
    lines.push(`  ${names[i]!.padEnd(width)}  ${status} ${escapeText(p.message)}${version}${ms}`);
    if (p.hint) lines.push(`  ${" ".repeat(width)}  ${paint.dim(`hint: ${escapeText(p.hint)}`)}`);
  });
  if (notes.length) {
    lines.push("");
    for (const n of notes) lines.push(`visibility: ${escapeText(n)}`);
  }
  if (v && !v.applied && Object.keys(v.variables ?? {}).length) {
    lines.push("", "visibility: --all ignores the visibility variables");
  }
  return `${lines.join("\n")}\n`;
}

const GPU_COLUMNS: TableColumn[] = [
  { header: "ID" },
  { header: "NAME" },
  { header: "MEMORY", align: "right" },
  { header: "FREE", align: "right" },
  { header: "CC" },
  { header: "UUID" },
  { header: "PCI" },
  { header: "NUMA" },
  { header: "" },
];

function gpuTable(gpus: readonly GpuInfo[], paint: Paint): string[] {
  const short = shortUuids(gpus.map((g) => g.uuid));
  const orDash = (v: string | number | null | undefined): string =>
    v === null || v === undefined ? "-" : escapeText(String(v));
  const rows = gpus.map((g) => [
    escapeText(g.id),
    escapeText(g.name),
    formatSize(g.memoryBytes),
    g.freeMemoryBytes === null || g.freeMemoryBytes === undefined ? "-" : formatSize(g.freeMemoryBytes),
    orDash(g.computeCapability),
    short(g.uuid),
    orDash(g.pciBusId),
    orDash(g.numaNode),
    g.mig?.enabled && !g.mig.parentUuid ? "MIG on" : "",
  ]);
  return formatTable(GPU_COLUMNS, rows, { paint });
}
