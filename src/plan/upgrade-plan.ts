/**
 * Plans written before memory-aware packing lack the fields it added; they are read with what
 * they meant then, so a committed plan or a run kept for `--resume` goes on working: each
 * pipeline reserves its declared peak, no GPU keeps a warm reserve, and the lower bound was
 * max(work ÷ slots, longest pipeline). Fills the parsed data in place, only where a field is missing.
 */

type Data = Record<string, unknown>;
const isRecord = (v: unknown): v is Data => typeof v === "object" && v !== null && !Array.isArray(v);

export function withMemoryFields(data: unknown): unknown {
  if (!isRecord(data)) return data;
  const { registry, pipelines, summary } = data;
  if (Array.isArray(registry))
    for (const e of registry) if (isRecord(e) && !("warmReserveBytes" in e)) e.warmReserveBytes = 0;
  let longest = 0;
  if (Array.isArray(pipelines))
    for (const p of pipelines) {
      if (!isRecord(p)) continue;
      if (!("reservationBytes" in p)) p.reservationBytes = p.gpu === null ? 0 : p.peakVramBytes;
      if (typeof p.estimateMs === "number") longest = Math.max(longest, p.estimateMs);
    }
  if (isRecord(summary) && !("lowerBoundTerms" in summary) && typeof summary.lowerBoundMs === "number") {
    const slots = summary.lowerBoundMs > longest;
    summary.lowerBoundBy = slots ? "gpu-slots" : "longest-pipeline";
    summary.lowerBoundTerms = {
      longestPipelineMs: longest,
      gpuSlotsMs: slots ? summary.lowerBoundMs : 0,
      gpuMemoryMs: 0,
      hostLanesMs: 0,
    };
  }
  return data;
}
