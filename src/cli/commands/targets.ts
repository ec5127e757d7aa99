/** `gpuplan targets`: the built-in inventory profiles for `compile --target`. */
import { inventorySchema } from "../../generated/schema-values.js";
import { TARGETS } from "../../inventory/targets.js";
import { formatSize, parseSize } from "../../units/size.js";
import { writeOut } from "../output.js";

export default async function targets(options: { json?: boolean }): Promise<number> {
  if (options.json) {
    writeOut(`${JSON.stringify({ schema: "gpuplan/targets@1", targets: TARGETS }, null, 2)}\n`);
    return 0;
  }
  const rows = TARGETS.map((t) => {
    const gpus = (t.inventory.gpus ?? []).map(
      (g) =>
        `${g.count ?? inventorySchema.defaults.ShortGpu.count}× ${g.name} ${formatSize(parseSize(g.memory) ?? 0)}`,
    );
    return [t.name, gpus.join(", ") || "no GPUs", `${t.inventory.cpu.threads} threads`];
  });
  const widths = [0, 1, 2].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  for (const r of rows)
    writeOut(
      `${r
        .map((c, i) => c.padEnd(widths[i]!))
        .join("  ")
        .trimEnd()}\n`,
    );
  return 0;
}
