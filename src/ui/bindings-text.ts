/**
 * Where each planned GPU runs, for a person: `cuda:3 → GPU-8f2a1c0b 0000:c1:00.0`, with what it
 * stands in for when it is not the planned UUID. Printed before a run starts and by --dry-run.
 */
import type { GpuBinding } from "../plan/bind-gpus.js";
import { escapeText } from "../text/safe-text.js";
import { shortUuids } from "./short-uuid.js";

/** One line per binding, under a heading line. */
export function formatBindings(bindings: readonly GpuBinding[]): string {
  const short = shortUuids(bindings.flatMap((b) => [b.live.uuid, b.planUuid]));
  const width = Math.max(...bindings.map((b) => b.planGpu.length));
  const replaced = bindings.filter((b) => b.replaced).length;
  const lines = bindings.map((b) => {
    const where = `${short(b.live.uuid)} ${escapeText(b.live.pciBusId ?? b.live.id)}`;
    const note = b.replaced ? `  (${escapeText(b.live.name)}, for ${short(b.planUuid)})` : "";
    return `  ${escapeText(b.planGpu.padEnd(width))} → ${where}${note}`;
  });
  const heading =
    replaced === 0
      ? "GPUs: the plan's own"
      : `GPUs: ${replaced} of ${bindings.length} bound by model (the planned UUIDs are not on this machine)`;
  return `${heading}\n${lines.join("\n")}\n`;
}
