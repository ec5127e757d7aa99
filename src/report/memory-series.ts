/**
 * Memory over time, one series per GPU (and one for host memory, which CPU steps' readings give),
 * from the gpu.memory.snapshot readings, with each GPU's budget from the plan. A long run's
 * readings are thinned to a bounded number of points keeping each stretch's highest and lowest, so
 * that peaks survive and a 5,000-step report stays small.
 */
import type { PlanRegistryEntry } from "../schema-types/plan.js";
import type { MemoryReading } from "../schema-types/run-events.js";
import type { MemorySeries } from "./model.js";

/** Points kept per series; beyond it, each stretch keeps its lowest and highest reading. */
const MAX_POINTS = 1500;

export function memorySeries(
  readings: readonly { at: number; reading: MemoryReading }[],
  registry: (gpu: string) => PlanRegistryEntry | undefined,
): MemorySeries[] {
  const byGpu = new Map<string, { uuid: string | null; total: number | null; points: [number, number][] }>();
  for (const { at, reading } of readings) {
    if (reading.usedBytes === null) continue;
    const id = reading.gpu === "cpu" ? "host" : reading.gpu;
    const s = byGpu.get(id) ?? { uuid: reading.uuid ?? null, total: null, points: [] };
    s.total = reading.totalBytes;
    s.points.push([at, reading.usedBytes]);
    byGpu.set(id, s);
  }
  const series: MemorySeries[] = [];
  for (const [gpu, s] of byGpu) {
    const entry = gpu === "host" ? undefined : registry(gpu);
    series.push({
      gpu,
      uuid: s.uuid,
      name: gpu === "host" ? "host memory" : (entry?.name ?? gpu),
      kind: "used",
      totalBytes: s.total,
      budgetBytes: entry?.memoryBudgetBytes ?? null,
      points: thin(dedupe(s.points.sort((a, b) => a[0] - b[0]))),
    });
  }
  // GPUs in id order (cuda:2 before cuda:10), host memory last.
  return series.sort((a, b) =>
    a.gpu === "host" ? 1 : b.gpu === "host" ? -1 : a.gpu.localeCompare(b.gpu, "en", { numeric: true }),
  );
}

/** Readings shared by steps that started together come once. */
function dedupe(points: [number, number][]): [number, number][] {
  return points.filter((p, i) => i === 0 || p[0] !== points[i - 1]![0] || p[1] !== points[i - 1]![1]);
}

function thin(points: [number, number][]): [number, number][] {
  if (points.length <= MAX_POINTS) return points;
  const buckets = Math.floor(MAX_POINTS / 2);
  const per = points.length / buckets;
  const out: [number, number][] = [];
  for (let b = 0; b < buckets; b++) {
    const slice = points.slice(Math.floor(b * per), Math.floor((b + 1) * per));
    if (slice.length === 0) continue;
    let lo = slice[0]!;
    let hi = slice[0]!;
    for (const p of slice) {
      if (p[1] < lo[1]) lo = p;
      if (p[1] > hi[1]) hi = p;
    }
    if (lo === hi) out.push(lo);
    else out.push(...(lo[0] <= hi[0] ? [lo, hi] : [hi, lo]));
  }
  return out;
}
