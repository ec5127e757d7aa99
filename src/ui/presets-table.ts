/** `gpuplan presets` for a person: each built-in device-map preset, where it puts each component, and why. */
import type { DeviceMapPreset } from "../compile/device-map/index.js";
import { noPaint, type Paint } from "./paint.js";
import { formatTable } from "./table.js";

export function formatPresets(presets: readonly DeviceMapPreset[], paint: Paint = noPaint): string {
  const columns = [{ header: "NAME" }, { header: "MEMORY" }, { header: "PLACEMENT" }];
  const [header, ...rows] = formatTable(
    columns,
    presets.map((p) => [p.name, p.memoryClass, describePlacement(p.components)]),
    { paint },
  );
  const body = rows.flatMap((row, i) => {
    const description = presets[i]?.description;
    return description === undefined ? [row] : [row, paint.dim(`  ${description}`)];
  });
  return `${[header, ...body].join("\n")}\n\nNames are case-insensitive; cuda:N is the pipeline's N-th GPU. Move or add components with \`overrides\`.\n`;
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
