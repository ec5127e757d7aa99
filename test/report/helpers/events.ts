/** Small plans and hand-written event sequences for the report model's unit tests. */
import { mkdtempSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { compilePlan } from "../../../src/compile/compile.js";
import { targetInventory } from "../../../src/inventory/load-inventory.js";
import { loadPipelineFile } from "../../../src/pipeline/load-pipeline.js";
import type { RunEvent } from "../../../src/run/record/events.js";
import type { GpuplanPlan } from "../../../src/schema-types/plan.js";

/** Compile `yaml` against a built-in target. */
export async function planOf(yaml: string, target = "2x-rtx3090"): Promise<GpuplanPlan> {
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-report-plan-"));
  const file = join(dir, "p.yaml");
  writeFileSync(file, yaml);
  const r = compilePlan(await loadPipelineFile(file), targetInventory(target));
  if (!r.plan) throw new Error(r.problems.map((p) => p.message).join("\n"));
  return r.plan;
}

const T0 = Date.parse("2026-11-23T10:00:00.000Z");

/**
 * Events from terse drafts: `[ms after T0, fields]`, run and the common fields filled in. What
 * the test leaves out of a draft (device, step) is null, as in run-level events.
 */
export function events(
  list: [number, Record<string, unknown>][],
  run = "20261123T100000Z-abcdef",
): RunEvent[] {
  return list.map(([ms, e]) => {
    const { event, pipeline = null, step = null, device = null, ...rest } = e;
    return {
      ts: new Date(T0 + ms).toISOString(),
      event,
      run,
      pipeline,
      step,
      device,
      ...rest,
    } as unknown as RunEvent;
  });
}

export const start = (pipeline: string, step: string, device: string, attempt = 1) => ({
  event: "gpu.step.start",
  pipeline,
  step,
  device,
  attempt,
  logPath: `.gpuplan/runs/r/logs/${pipeline}@${step}.out.log`,
  stderrPath: `.gpuplan/runs/r/logs/${pipeline}@${step}.err.log`,
});

export const end = (
  pipeline: string,
  step: string,
  device: string,
  durationMs: number,
  status = "ok",
  attempt = 1,
  extra: Record<string, unknown> = {},
) => ({
  event: "gpu.step.end",
  pipeline,
  step,
  device,
  status,
  exitCode: status === "ok" ? 0 : status === "interrupted" ? null : 1,
  signal: null,
  durationMs,
  attempt,
  ...extra,
});

export const runStart = (pipelines: string[]) => ({
  event: "run.start",
  schema: "gpuplan/run-events@1",
  pipelines,
  runDir: ".gpuplan/runs/r",
});

export const runEnd = (durationMs: number, status = "ok", ok = 0, failed = 0, skipped = 0) => ({
  event: "run.end",
  durationMs,
  status,
  ok,
  failed,
  skipped,
});

export const acquired = (
  pipeline: string,
  gpu: string,
  slots: number[],
  waitedMs = 0,
  step: string | null = null,
) => ({
  event: "gpu.lock.acquired",
  pipeline,
  step,
  device: gpu,
  gpu,
  slots,
  waitedMs,
  exclusive: step !== null,
});

export const released = (pipeline: string, gpu: string, slots: number[], step: string | null = null) => ({
  event: "gpu.lock.released",
  pipeline,
  step,
  device: gpu,
  gpu,
  slots,
  exclusive: step !== null,
});

export const waiting = (pipeline: string, gpu: string, step: string | null = null, slots = 1) => ({
  event: "gpu.lock.wait",
  pipeline,
  step,
  device: gpu,
  gpu,
  slots,
  exclusive: step !== null,
});
