/**
 * A plan's report model, before anything runs: each pipeline in a slot of its GPU from its
 * estimated start (the lowest slot free then, as the lock hands them out), its steps one after the
 * other by their estimates; CPU pipelines in host lanes; the memory each GPU's pipelines reserve
 * over time against its budget; and why each pipeline is where it is. Pure.
 */
import type { GpuplanPlan, PlannedPipeline, PlanRegistryEntry } from "../schema-types/plan.js";
import { formatSize } from "../units/size.js";
import { assignLanes } from "./interval-lanes.js";
import type { Bar, Hold, Lane, MemorySeries, Placement, ReportModel, StepRow } from "./model.js";
import { gpuFacts, indexPlan, stepArgv } from "./plan-index.js";

/** What a pipeline keeps of its GPU's memory while it runs (older plans are read with their peak). */
const reservationOf = (p: PlannedPipeline): number => p.reservationBytes;

export function buildPlanReport(plan: GpuplanPlan, planFile: string): ReportModel {
  const index = indexPlan(plan);
  const pipelines = plan.pipelines.map((p) => p.name);
  const lanes: Lane[] = [];
  const slotLanes = new Map<string, number[]>();
  for (const r of plan.registry) {
    const list: number[] = [];
    for (let s = 0; s < r.maxPipelines; s++)
      list.push(lanes.push({ kind: "slot", gpu: r.gpu, index: s, label: `${r.gpu} slot ${s}` }) - 1);
    slotLanes.set(r.gpu, list);
  }
  const laneOf = new Map<string, number>();
  const holds: Hold[] = [];
  const span = (p: PlannedPipeline) => ({
    start: p.estimatedStartMs,
    end: p.estimatedStartMs + p.estimateMs,
  });
  for (const r of plan.registry) {
    const on = plan.pipelines
      .map((p, i) => ({ p, i }))
      .filter(({ p }) => p.gpus.includes(r.gpu) || (p.gpus.length === 0 && p.gpu === r.gpu));
    const { lanes: slots } = assignLanes(
      on.map(({ p }) => span(p)),
      new Array<number>(r.maxPipelines).fill(0),
    );
    on.forEach(({ p, i }, j) => {
      const list = slotLanes.get(r.gpu)!;
      while (list.length <= slots[j]!)
        list.push(
          lanes.push({
            kind: "slot",
            gpu: r.gpu,
            index: list.length,
            label: `${r.gpu} slot ${list.length}`,
          }) - 1,
        );
      const lane = list[slots[j]!]!;
      if (p.gpus[0] === r.gpu || (p.gpus.length === 0 && p.gpu === r.gpu)) laneOf.set(p.name, lane);
      holds.push({ lane, ...span(p), pipeline: i, kind: "slot" });
    });
  }
  const host = plan.pipelines.filter((p) => !laneOf.has(p.name));
  const { lanes: hostSlots, count } = assignLanes(host.map(span));
  const hostLanes: number[] = [];
  for (let h = 0; h < count; h++)
    hostLanes.push(lanes.push({ kind: "host", gpu: null, index: h, label: `host ${h}` }) - 1);
  host.forEach((p, j) => {
    laneOf.set(p.name, hostLanes[hostSlots[j]!]!);
  });

  const rows: StepRow[] = [];
  const bars: Bar[] = [];
  for (const s of index.steps) {
    const p = s.pipeline;
    const lane = laneOf.get(p.name)!;
    const row = rows.length;
    const bar: Bar = {
      lane,
      start: s.plannedStartMs,
      end: s.plannedEndMs,
      row,
      attempt: 1,
      outcome: "planned",
      status: null,
      device: s.step.device,
      onHost: s.step.device === "cpu" && lanes[lane]!.kind === "slot",
      durationMs: s.step.estimateMs,
      exitCode: null,
      signal: null,
      framework: null,
      hint: null,
      logPath: null,
      stderrPath: null,
      stderrTail: [],
      peakVramBytes: null,
      load: null,
      reused: false,
    };
    rows.push({
      pipeline: pipelines.indexOf(p.name),
      step: s.step.id,
      device: s.step.device,
      uuid: s.step.uuid,
      outcome: "planned",
      attempts: 0,
      durationMs: s.step.estimateMs,
      estimateMs: s.step.estimateMs,
      estimateRatio: null,
      peakVramBytes: null,
      vramBytes: s.step.vramBytes,
      budgetBytes: s.step.memoryBudgetBytes,
      waitMs: 0,
      argv: stepArgv(s.step),
      exclusive: s.step.exclusive,
      worker: s.step.worker?.key ?? null,
      planned: [s.plannedStartMs, s.plannedEndMs],
      bars: [bars.push(bar) - 1],
      skipReason: null,
    });
    if (s.step.exclusive && s.step.device !== "cpu") {
      for (const other of slotLanes.get(s.step.device) ?? [])
        if (other !== lane)
          holds.push({
            lane: other,
            start: s.plannedStartMs,
            end: s.plannedEndMs,
            pipeline: rows[row]!.pipeline,
            kind: "exclusive",
          });
    }
  }
  const spanMs = Math.max(plan.summary.makespanMs, ...bars.map((b) => b.end));
  const h = {
    kind: "plan" as const,
    title: `plan ${plan.name}`,
    runId: null,
    runDir: null,
    planName: plan.name,
    pipelineFile: plan.source.file,
    input: planFile,
    gpus: plan.registry.map(gpuFacts),
    startedAt: null,
    endedAt: null,
    wallMs: null,
    status: "planned",
    sessions: 0,
    counts: {
      steps: rows.length,
      ok: 0,
      failed: 0,
      oom: 0,
      timeout: 0,
      retried: 0,
      fallback: 0,
      interrupted: 0,
      kept: 0,
      skipped: 0,
      notRun: 0,
      attempts: 0,
    },
    makespanMs: null,
    planMakespanMs: plan.summary.makespanMs,
    lowerBoundMs: plan.summary.lowerBoundMs,
    maxParallelPipelines: plan.settings.maxParallelPipelines,
    notes: [] as string[],
  };
  return {
    header: h,
    pipelines,
    axis: { spanMs, breaks: [] },
    lanes,
    bars,
    holds,
    waits: [],
    queues: [],
    skips: [],
    planned: [],
    memory: plan.registry.map((r) => reservedSeries(plan, r)),
    rows,
    placements: plan.pipelines.map((p, i) => placementOf(plan, p, i)),
  };
}

/** Memory the plan's pipelines reserve on a GPU over time; an exclusive step holds the whole budget. */
function reservedSeries(plan: GpuplanPlan, r: PlanRegistryEntry): MemorySeries {
  const changes: [number, number][] = [];
  for (const p of plan.pipelines) {
    if (!p.gpus.includes(r.gpu) && p.gpu !== r.gpu) continue;
    const start = p.estimatedStartMs;
    changes.push([start, reservationOf(p)], [start + p.estimateMs, -reservationOf(p)]);
    let t = start;
    for (const s of p.steps) {
      if (s.exclusive && s.device === r.gpu)
        changes.push(
          [t, r.memoryBudgetBytes - reservationOf(p)],
          [t + s.estimateMs, -(r.memoryBudgetBytes - reservationOf(p))],
        );
      t += s.estimateMs;
    }
  }
  changes.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
  const points: [number, number][] = [];
  let v = 0;
  for (const [t, d] of changes) {
    v += d;
    if (points.length && points.at(-1)![0] === t) points.at(-1)![1] = v;
    else points.push([t, v]);
  }
  return {
    gpu: r.gpu,
    uuid: r.uuid,
    name: r.name,
    kind: "reserved",
    totalBytes: r.memoryBytes,
    budgetBytes: r.memoryBudgetBytes,
    points: points.length ? points : [[0, 0]],
  };
}

/** Why the pipeline is on its GPU(s): each other GPU and the reason it is not there, GPUs with the same reason together. */
function placementOf(plan: GpuplanPlan, p: PlannedPipeline, i: number): Placement {
  const gpuSteps = p.steps.filter((s) => s.gpu);
  const base = {
    pipeline: i,
    gpus: p.gpus.length ? p.gpus : p.gpu ? [p.gpu] : [],
    backend: p.backend,
    estimateMs: p.estimateMs,
    startMs: p.estimatedStartMs,
    reservationBytes: p.gpus.length || p.gpu ? reservationOf(p) : 0,
  };
  if (gpuSteps.length === 0) return { ...base, notOn: [], note: "no GPU step: it runs on the host" };
  const reasons = new Map<string, string[]>();
  const biggest = gpuSteps.reduce((a, b) => ((b.vramBytes ?? 0) > (a.vramBytes ?? 0) ? b : a));
  const preferred = plan.settings.platformPriority.filter((b) => b !== "cpu");
  for (const r of plan.registry) {
    if (base.gpus.includes(r.gpu)) continue;
    let why: string;
    if ((biggest.vramBytes ?? 0) > r.memoryBudgetBytes) {
      why = `too small: step \`${biggest.id}\` needs ${formatSize(biggest.vramBytes ?? 0)}, its budget is ${formatSize(r.memoryBudgetBytes)}`;
    } else if (p.backend !== "cpu" && r.backend !== p.backend) {
      why = `a ${r.backend} GPU; the plan uses ${p.backend} first (platform_priority: ${preferred.join(", ")})`;
    } else if (p.fellBackToCpu) {
      why = "could not take it (see the compile warning gpu-fallback-cpu)";
    } else {
      why = "could run it; the schedule placed it where it finishes soonest";
    }
    reasons.set(why, [...(reasons.get(why) ?? []), r.gpu]);
  }
  return {
    ...base,
    notOn: [...reasons].map(([reason, gpus]) => ({ gpu: gpus.join(", "), reason })),
    note: p.fellBackToCpu
      ? "its GPU steps run on the CPU (on_oom fallback: cpu) because no GPU could take them"
      : null,
  };
}
