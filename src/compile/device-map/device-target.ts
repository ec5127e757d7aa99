/** A placement as written in a preset or override, before it meets the pipeline's real GPUs. */
export type DeviceTarget = { kind: "gpu"; index: number } | { kind: "cpu" } | { kind: "disk" };

const GPU_RE = /^(?:cuda|gpu):([0-9]+)$/;

/** Parse `cuda:N` / `gpu:N` (both the pipeline's N-th GPU), `cpu` or `disk`; undefined otherwise. */
export function parseDeviceTarget(text: string): DeviceTarget | undefined {
  if (text === "cpu" || text === "disk") return { kind: text };
  const m = GPU_RE.exec(text);
  if (!m) return undefined;
  const index = Number(m[1]);
  return Number.isSafeInteger(index) ? { kind: "gpu", index } : undefined;
}
