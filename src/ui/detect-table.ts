/**
 * The human form of an inventory: a GPU table, the CPU, one line per probe, and which
 * variable narrowed the view. Returns text; src/cli prints it. Colour is the caller's choice.
 */

import { shortUuid } from "../detect/uuid.js";
import type { GpuInfo, Inventory, ProbeReport } from "../inventory/types.js";
import { formatSize } from "../units/size.js";

const STATUS_COLOUR: Record<ProbeReport["status"], number> = {
  ok: 32,
  "no-devices": 33,
  "not-found": 90,
  skipped: 90,
  error: 31,
  timeout: 31,
};

/** Render `inventory`; `notes` are the visibility lines from detection. */
export function formatInventory(inventory: Inventory, notes: readonly string[], colour: boolean): string {
  const paint = (code: number, text: string) => (colour ? `\x1b[${code}m${text}\x1b[0m` : text);
  const lines: string[] = [];
  const v = inventory.visibility;
  const hidden = v?.hiddenGpus ?? 0;
  const narrowed = v?.narrowedBy.length ? `; narrowed by ${v.narrowedBy.join(", ")}` : "";
  const physical = inventory.gpus.filter((g) => !g.mig?.parentUuid).length;
  const migs = inventory.gpus.length - physical;
  if (inventory.gpus.length === 0) {
    lines.push(hidden ? `No GPU visible (${hidden} hidden${narrowed}).` : "No GPU found.");
  } else {
    const head = `${physical} GPU${physical === 1 ? "" : "s"}${migs ? ` and ${migs} MIG instance${migs === 1 ? "" : "s"}` : ""}`;
    lines.push(paint(1, `${head}${hidden ? ` visible (${hidden} hidden${narrowed})` : ""}`));
    lines.push(...table(inventory.gpus, paint));
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
  lines.push(`${paint(1, "CPU")}  ${cpu.model}: ${cores}, ${formatSize(cpu.memoryBytes)} memory${numa}`);
  lines.push("");
  lines.push(paint(1, "Probes"));
  const width = Math.max(...inventory.probes.map((p) => p.name.length));
  for (const p of inventory.probes) {
    const status = paint(STATUS_COLOUR[p.status], p.status.padEnd(10));
    const ms = p.durationMs
      ? ` (${p.durationMs < 10 ? p.durationMs.toFixed(1) : Math.round(p.durationMs)} ms)`
      : "";
    const version = p.version ? ` [${p.version}]` : "";
    lines.push(`  ${p.name.padEnd(width)}  ${status} ${p.message}${version}${ms}`);
    if (p.hint) lines.push(`  ${" ".repeat(width)}  ${paint(2, `hint: ${p.hint}`)}`);
  }
  if (notes.length) {
    lines.push("");
    for (const n of notes) lines.push(`visibility: ${n}`);
  }
  if (v && !v.applied && Object.keys(v.variables ?? {}).length) {
    lines.push("", "visibility: --all ignores the visibility variables");
  }
  return `${lines.join("\n")}\n`;
}

function table(gpus: GpuInfo[], paint: (code: number, text: string) => string): string[] {
  const rows = gpus.map((g) => [
    g.id,
    g.name,
    formatSize(g.memoryBytes),
    g.freeMemoryBytes === null || g.freeMemoryBytes === undefined ? "-" : formatSize(g.freeMemoryBytes),
    g.computeCapability ?? "-",
    shortUuid(g.uuid),
    g.pciBusId ?? "-",
    g.numaNode === null || g.numaNode === undefined ? "-" : String(g.numaNode),
    g.mig?.enabled && !g.mig.parentUuid ? "MIG on" : "",
  ]);
  const header = ["ID", "NAME", "MEMORY", "FREE", "CC", "UUID", "PCI", "NUMA", ""];
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => (i === 2 || i === 3 ? c.padStart(widths[i]!) : c.padEnd(widths[i]!)))
      .join("  ")
      .trimEnd();
  return [paint(2, line(header)), ...rows.map(line)];
}
