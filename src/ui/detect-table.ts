/**
 * The human form of an inventory, read the way nvidia-smi and nvitop are: the driver and CUDA
 * (or HIP) versions, a GPU table with memory used and total, utilisation, temperature and power,
 * the processes on the GPUs (those gpuplan started marked), the CPU, one line per probe, and which
 * variable narrowed the view. Returns text; src/cli prints it. Every string a vendor library,
 * /proc or the environment gave is escaped before it is shown (src/text/safe-text.ts).
 */

import type { Drivers, GpuInfo, GpuProcess, Inventory, ProbeReport } from "../inventory/types.js";
import { escapeText } from "../text/safe-text.js";
import { formatDuration } from "../units/duration.js";
import { formatSize } from "../units/size.js";
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
  const lines: string[] = [...driverLines(inventory.drivers, paint)];
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
    const processes = processLines(inventory.gpus, paint);
    if (processes.length) lines.push("", ...processes);
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

/** nvidia-smi's header: "NVIDIA  driver 550.54.15  CUDA 12.4", and the same for AMD with HIP. */
function driverLines(drivers: Drivers | undefined, paint: Paint): string[] {
  const parts = (driver: string | null, runtime: string, version: string | null): string =>
    [driver && `driver ${escapeText(driver)}`, version && `${runtime} ${escapeText(version)}`]
      .filter(Boolean)
      .join("  ");
  const lines: string[] = [];
  if (drivers?.nvidia) {
    lines.push(
      `${paint.bold("NVIDIA")}  ${parts(drivers.nvidia.driverVersion, "CUDA", drivers.nvidia.cudaVersion)}`,
    );
  }
  if (drivers?.amd) {
    lines.push(`${paint.bold("AMD")}     ${parts(drivers.amd.driverVersion, "HIP", drivers.amd.hipVersion)}`);
  }
  return lines.length ? [...lines, ""] : [];
}

const GPU_COLUMNS: TableColumn[] = [
  { header: "ID" },
  { header: "NAME" },
  { header: "MEMORY USED", align: "right" },
  { header: "TOTAL", align: "right" },
  { header: "UTIL", align: "right" },
  { header: "TEMP", align: "right" },
  { header: "POWER", align: "right" },
  { header: "CC" },
  { header: "UUID" },
  { header: "PCI" },
  { header: "NUMA" },
  { header: "" },
];

const known = (v: number | null | undefined): v is number => v !== null && v !== undefined;

/** Used memory as the library says, else what is not free (an inventory saved with only free memory). */
function usedMemory(g: GpuInfo): string {
  if (known(g.usedMemoryBytes)) return formatSize(g.usedMemoryBytes);
  return known(g.freeMemoryBytes) ? formatSize(Math.max(0, g.memoryBytes - g.freeMemoryBytes)) : "-";
}

/**
 * Longest GPU name shown: NVML's name buffer holds 95 characters. A longer one (a broken library's
 * 4,000) would widen every row past any terminal; the inventory JSON has it whole.
 */
const NAME_WIDTH = 96;

/** Cut shown text (escaped already: `\x1b` counts as the four characters the terminal shows). */
const cut = (text: string, width: number): string =>
  text.length > width ? `${text.slice(0, width - 1)}…` : text;

function gpuTable(gpus: readonly GpuInfo[], paint: Paint): string[] {
  const short = shortUuids(gpus.map((g) => g.uuid));
  const orDash = (v: string | number | null | undefined): string =>
    v === null || v === undefined ? "-" : escapeText(String(v));
  const rows = gpus.map((g) => [
    escapeText(g.id),
    cut(escapeText(g.name), NAME_WIDTH),
    usedMemory(g),
    formatSize(g.memoryBytes),
    known(g.utilizationPercent) ? `${Math.round(g.utilizationPercent)}%` : "-",
    known(g.temperatureC) ? `${Math.round(g.temperatureC)}C` : "-",
    known(g.powerWatts) ? `${Math.round(g.powerWatts)}W` : "-",
    orDash(g.computeCapability),
    short(g.uuid),
    orDash(g.pciBusId),
    orDash(g.numaNode),
    g.mig?.enabled && !g.mig.parentUuid ? "MIG on" : "",
  ]);
  return formatTable(GPU_COLUMNS, rows, { paint });
}

const PROCESS_COLUMNS: TableColumn[] = [
  { header: "GPU" },
  { header: "PID", align: "right" },
  { header: "USER" },
  { header: "MEMORY", align: "right" },
  { header: "GPUPLAN" },
  { header: "COMMAND" },
];

/** Longest command shown; the inventory JSON has it whole. */
const COMMAND_WIDTH = 80;

/**
 * nvidia-smi's process table: each process on the device it runs on (a MIG instance rather than
 * its GPU), those gpuplan started with their run and step, and what the libraries could not say.
 */
function processLines(gpus: readonly GpuInfo[], paint: Paint): string[] {
  // An inventory written before gpuplan listed processes (or by hand) says nothing of them.
  if (gpus.every((g) => g.processes === undefined)) return [];
  const rows: string[][] = [];
  let reported = false;
  for (const g of gpus) {
    if (!g.processes) continue;
    reported = true;
    // A MIG-enabled GPU's processes run in its instances, which list them (an unprivileged caller
    // gets its list only as their sum): show each once, on its instance.
    const instances =
      g.mig?.enabled && !g.mig.parentUuid ? gpus.filter((m) => m.mig?.parentUuid === g.uuid) : [];
    if (instances.length && instances.every((m) => m.processes)) continue;
    for (const p of g.processes) rows.push(processRow(g, p, paint));
  }
  if (!reported) return [paint.bold("Processes"), "  not reported by the GPU libraries"];
  if (!rows.length) return [paint.bold("Processes"), "  none"];
  return [paint.bold("Processes"), ...formatTable(PROCESS_COLUMNS, rows, { paint, indent: "  " })];
}

function processRow(g: GpuInfo, p: GpuProcess, paint: Paint): string[] {
  const command = p.command === null ? "-" : escapeText(p.command);
  const by = p.gpuplan
    ? paint.cyan(
        escapeText(
          [
            p.gpuplan.run,
            p.gpuplan.pipeline && `${p.gpuplan.pipeline}${p.gpuplan.step ? `/${p.gpuplan.step}` : ""}`,
          ]
            .filter(Boolean)
            .join(" "),
        ),
      )
    : "-";
  return [
    escapeText(g.id),
    String(p.pid),
    p.user === null ? "-" : escapeText(p.user),
    known(p.usedMemoryBytes) ? formatSize(p.usedMemoryBytes) : "-",
    by,
    cut(command, COMMAND_WIDTH),
  ];
}
