/**
 * Plans written by earlier gpuplans lack fields added since, or name them as they were then; they
 * are read with what they meant then, so a committed plan or a run kept for `--resume` goes on
 * working. `upgradePlan` runs before the schema check; format 2's left-out defaults are filled
 * after it (plan-defaults.ts).
 */

type Data = Record<string, unknown>;
const isRecord = (v: unknown): v is Data => typeof v === "object" && v !== null && !Array.isArray(v);

/** The parsed plan as this gpuplan's schema describes it, changed in place where it can be. */
export function upgradePlan(data: unknown): unknown {
  return withMemoryFields(withRenamedSettings(data));
}

/**
 * Plans written before memory-aware packing lack the fields it added: each pipeline reserves its
 * declared peak, no GPU keeps a warm reserve, and the lower bound was max(work ÷ slots, longest
 * pipeline). Fills the parsed data in place, only where a field is missing.
 */
function withMemoryFields(data: unknown): unknown {
  if (!isRecord(data)) return data;
  const { registry, pipelines, summary } = data;
  if (Array.isArray(registry))
    for (const e of registry) if (isRecord(e) && !("warmReserveBytes" in e)) e.warmReserveBytes = 0;
  let longest = 0;
  if (Array.isArray(pipelines))
    for (const p of pipelines) {
      if (!isRecord(p)) continue;
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

/**
 * `settings.workers` was renamed `settings.maxParallelPipelines` ("worker" is the warm model
 * process); a plan written before is read with the new name.
 */
function withRenamedSettings(data: unknown): unknown {
  if (!isRecord(data) || !isRecord(data.settings)) return data;
  const { workers, ...settings } = data.settings;
  if (workers === undefined || "maxParallelPipelines" in settings) return data;
  return { ...data, settings: { ...settings, maxParallelPipelines: workers } };
}
