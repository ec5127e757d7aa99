/**
 * `gpuplan targets` for a person: each inventory profile, its GPUs and CPU threads. Names and GPU
 * names of custom targets come from files anyone may write: escaped.
 */
import { inventorySchema } from "../generated/schema-values.js";
import type { Target } from "../inventory/targets.js";
import { escapeText } from "../text/safe-text.js";
import { formatSize, parseSize } from "../units/size.js";
import { noPaint, type Paint } from "./paint.js";
import { formatTable } from "./table.js";

/** `shadowed`: custom targets a built-in one of the same name hides; their rows say they are not used. */
export function formatTargets(
  targets: readonly Target[],
  paint: Paint = noPaint,
  shadowed: ReadonlySet<Target> = new Set(),
): string {
  const rows = targets.map((t) => {
    const gpus = (t.inventory.gpus ?? []).map(
      (g) =>
        `${g.count ?? inventorySchema.defaults.ShortGpu.count}× ${escapeText(g.name)} ${formatSize(parseSize(g.memory) ?? 0)}`,
    );
    const name = shadowed.has(t)
      ? `${escapeText(t.name)} ${paint.dim("(custom, not used: a built-in has this name)")}`
      : escapeText(t.name);
    return [name, gpus.join(", ") || "no GPUs", `${t.inventory.cpu.threads} threads`];
  });
  const columns = [{ header: "NAME" }, { header: "GPUS" }, { header: "CPU" }];
  return `${formatTable(columns, rows, { paint }).join("\n")}\n`;
}
