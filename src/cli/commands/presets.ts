/** `gpuplan presets`: the built-in device-map presets, as a table or as versioned JSON. */
import { type DeviceMapPreset, listPresets } from "../../compile/device-map/index.js";
import { writeOut } from "../output.js";

/** List the presets on stdout; always succeeds. */
export default async function presets(options: { json?: boolean }): Promise<number> {
  const table = listPresets();
  if (options.json) {
    writeOut(`${JSON.stringify({ schema: "gpuplan/presets@1", presets: table }, null, 2)}\n`);
    return 0;
  }
  writeOut(renderTable(table));
  return 0;
}

/** "cuda:0: unet, controlnet; cuda:1: text_encoder, vae": grouped by device, GPUs first, then cpu and disk. */
function describePlacement(components: Readonly<Record<string, string>>): string {
  const byDevice = new Map<string, string[]>();
  for (const [component, device] of Object.entries(components)) {
    byDevice.set(device, [...(byDevice.get(device) ?? []), component]);
  }
  return [...byDevice]
    .sort(([a], [b]) => deviceRank(a) - deviceRank(b))
    .map(([device, names]) => `${device}: ${names.join(", ")}`)
    .join("; ");
}

function deviceRank(device: string): number {
  if (device === "cpu") return Number.MAX_SAFE_INTEGER - 1;
  if (device === "disk") return Number.MAX_SAFE_INTEGER;
  return Number(device.slice(device.indexOf(":") + 1));
}

function renderTable(table: readonly DeviceMapPreset[]): string {
  const rows = [
    ["NAME", "MEMORY", "PLACEMENT"],
    ...table.map((p) => [p.name, p.memoryClass, describePlacement(p.components)]),
  ];
  const widths = [0, 1].map((col) => Math.max(...rows.map((r) => r[col]?.length ?? 0)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((cell, i) => cell.padEnd(widths[i] ?? 0))
      .join("  ")
      .trimEnd();
  const body = rows.flatMap((cells, i) => {
    const description = i === 0 ? undefined : table[i - 1]?.description;
    return description === undefined ? [line(cells)] : [line(cells), `  ${description}`];
  });
  return `${body.join("\n")}\n\nNames are case-insensitive; cuda:N is the pipeline's N-th GPU. Move or add components with \`overrides\`.\n`;
}
