/**
 * Assemble the plan object from the resolved pipelines, the registry and the schedule. Keys are
 * written in a fixed order and nothing time- or machine-dependent goes in, so the same inputs
 * give the same bytes.
 */

import { append } from "../lists/append.js";
import { incomingConversions, transferMs } from "../pipeline/conversions.js";
import type { ResolvedFile, ResolvedPipeline, ResolvedStep } from "../pipeline/model.js";
import type { Problem } from "../problems/problem.js";
import type { GpuplanPlan, PlannedPipeline, PlannedStep } from "../schema-types/plan.js";
import { VERSION } from "../version.js";
import type { Assignment, Schedule } from "./assign.js";
import { resolveDeviceMap } from "./device-map/index.js";
import type { RegistryEntry } from "./registry.js";
import { sharedPeakVram } from "./registry.js";

export interface PlanInputs {
  /** The pipeline file as typed, for problems. */
  file: string;
  /** The pipeline file as the plan records it (relative to the plan's folder). */
  recordedFile: string;
  sha256: string;
  resolved: ResolvedFile;
  inventoryLabel: string;
  fingerprint: string;
  inventoryGpus: number;
  cpuMemoryBytes: number;
  usableCores: number;
  registry: RegistryEntry[];
  schedule: Schedule;
}

export function buildPlan(inputs: PlanInputs): { value: GpuplanPlan; problems: Problem[] } {
  const problems: Problem[] = [];
  const { resolved, registry, schedule } = inputs;
  const pipelines = schedule.assignments.map((a) => planPipeline(a, inputs, problems));
  const gpuPipelines = pipelines.filter((p) => p.gpu !== null).length;
  const plan: GpuplanPlan = {
    schema: "gpuplan/plan@2",
    gpuplanVersion: VERSION,
    name: resolved.name,
    source: { file: inputs.recordedFile, sha256: inputs.sha256 },
    inventory: { label: inputs.inventoryLabel, fingerprint: inputs.fingerprint, gpus: inputs.inventoryGpus },
    settings: {
      memoryStrategy: resolved.registry.memoryStrategy,
      memoryFraction: resolved.registry.memoryFraction,
      platformPriority: resolved.registry.platformPriority,
      maxParallelPipelines: resolved.registry.maxParallelPipelines ?? inputs.usableCores,
      contextReserveBytes: resolved.registry.contextReserveBytes,
      maxWarmPerGpu: resolved.registry.maxWarmPerGpu,
      // Only when the file has one, so other plans stay byte for byte as they were.
      ...(resolved.registry.executor && { executor: resolved.registry.executor }),
    },
    registry: registry.map((e) => ({
      gpu: e.gpu.id,
      uuid: e.gpu.uuid,
      name: e.gpu.name,
      backend: e.gpu.backend,
      pciBusId: e.gpu.pciBusId,
      memoryBytes: e.gpu.memoryBytes,
      memoryBudgetBytes: e.memoryBudgetBytes,
      warmReserveBytes: e.warmReserveBytes,
      maxPipelines: e.maxPipelines,
      limitedBy: e.limitedBy,
      ...(e.gpu.computeCapability !== null && { computeCapability: e.gpu.computeCapability }),
      // Only when known, so plans of machines without it stay as they were.
      ...(e.gpu.cpuAffinity?.length ? { cpuAffinity: e.gpu.cpuAffinity } : {}),
      ...(e.visibleAs !== null && { visibleAs: e.visibleAs }),
    })),
    pipelines,
    summary: {
      pipelines: pipelines.length,
      gpuPipelines,
      cpuPipelines: pipelines.length - gpuPipelines,
      steps: pipelines.reduce((n, p) => n + p.steps.length, 0),
      makespanMs: schedule.makespanMs,
      lowerBoundMs: schedule.lowerBoundMs,
      lowerBoundBy: schedule.lowerBoundBy,
      lowerBoundTerms: schedule.terms,
      gpus: schedule.loads.map((l) => ({
        gpu: l.entry.gpu.id,
        pipelines: l.pipelines,
        workMs: l.workMs,
        finishMs: l.finishMs,
        committedVramBytes: l.committedVramBytes,
      })),
    },
    diagnostics: [],
  };
  return { value: plan, problems };
}

function planPipeline(a: Assignment, inputs: PlanInputs, problems: Problem[]): PlannedPipeline {
  const p = a.pipeline;
  const first = a.gpus[0];
  return {
    name: p.name,
    template: p.template,
    matrix: p.matrix,
    gpu: first ? first.gpu.id : null,
    gpus: a.gpus.map((e) => e.gpu.id),
    backend: first ? first.gpu.backend : "cpu",
    fellBackToCpu: a.fellBackToCpu,
    estimateMs: a.workMs,
    estimatedStartMs: a.estimatedStartMs,
    peakVramBytes: sharedPeakVram(p),
    reservationBytes: a.reservationBytes,
    source: `${inputs.recordedFile}#${p.pointer}`,
    // The schema says minItems 1 (a tuple type); the pipeline schema already guarantees it.
    steps: p.steps.map((s, j) => planStep(p, s, j, a, inputs, problems)) as PlannedPipeline["steps"],
  };
}

function planStep(
  p: ResolvedPipeline,
  s: ResolvedStep,
  j: number,
  a: Assignment,
  inputs: PlanInputs,
  problems: Problem[],
): PlannedStep {
  const onGpu = s.isGpu && a.gpus.length > 0;
  const first = a.gpus[0];
  // What the step may use: the whole budget when it owns the GPU, else what its pipeline reserved.
  const stepBudget = (e: RegistryEntry) => (s.exclusive ? e.memoryBudgetBytes : a.reservationBytes);
  // On each of its GPUs, as one number (its framework's limit): what fits on every one of them.
  const budgetOnEach = Math.min(...a.gpus.map(stepBudget));
  let deviceMap: PlannedStep["deviceMap"] = null;
  if (s.deviceMap && !a.unplaced) {
    const r = resolveDeviceMap(s.deviceMap, {
      gpus: onGpu ? a.gpus.map((e) => ({ id: e.gpu.id, budgetBytes: s.vramBytes ?? stepBudget(e) })) : [],
      cpuMemoryBytes: inputs.cpuMemoryBytes > 0 ? inputs.cpuMemoryBytes : null,
      contextReserveBytes: inputs.resolved.registry.contextReserveBytes,
      file: inputs.file,
      pointer: `${s.pointer}/device_map`,
      label: `step \`${s.id}\` of pipeline \`${p.name}\``,
    });
    append(problems, r.problems);
    if (r.value)
      deviceMap = { preset: r.value.preset, map: r.value.map, bytesByDevice: r.value.bytesByDevice };
  }
  return {
    id: s.id,
    device: onGpu && first ? first.gpu.id : "cpu",
    uuid: onGpu && first ? first.gpu.uuid : null,
    argv: s.argv as PlannedStep["argv"],
    shell: s.shell,
    cwd: s.cwd,
    env: s.env,
    memory: s.memory,
    gpu: s.isGpu,
    vramBytes: s.vramBytes,
    memoryBudgetBytes: onGpu ? budgetOnEach : null,
    dataBytes: s.dataBytes,
    needs: s.needs,
    conversions: incomingConversions(p, j).map((c) => ({ ...c, transferMs: transferMs(c) })),
    deviceMap,
    exclusive: s.exclusive,
    timeoutMs: s.timeoutMs,
    estimateMs: s.estimateMs,
    // Only with compile --history, so other plans stay byte for byte as they were.
    ...(s.learned && { learned: s.learned }),
    onOom: s.onOom,
    keepWarm: s.keepWarm,
    worker: s.worker ? { ...s.worker, argv: s.worker.argv as [string, ...string[]] } : null,
    source: `${inputs.recordedFile}#${s.pointer}`,
  };
}
