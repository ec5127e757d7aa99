/**
 * What the live view shows, as data: a pure reducer over RunEvents (no clocks, no I/O), so every
 * screen state can be built from an event list in a test. Elapsed times are computed at render time
 * from `startedMs` and the clock the renderer is given.
 */
import type { GpuplanPlan } from "../../schema-types/plan.js";
import type { RunEvent } from "../events.js";
import {
  readMemory,
  readNumber,
  readSlotCount,
  readSlotNumbers,
  readStatus,
  readString,
} from "./event-fields.js";

/** The lane id for CPU pipelines and CPU steps. */
export const CPU_LANE = "cpu";

export interface SlotHolder {
  pipeline: string;
  /** Held for an exclusive step (every slot of the GPU is then this pipeline's). */
  exclusive: boolean;
  /** Taken without a lock event (the step started on the GPU first); freed when that step ends. */
  implicit: boolean;
}

export interface Lane {
  /** cuda:N, rocm:N, cuda:N/migK, or "cpu". */
  id: string;
  /** Model name from the plan's registry ("" for the CPU lane). */
  name: string;
  /** Slot count (maxPipelines); 0 for the CPU lane, which has no slots. */
  slotCount: number;
  /** One entry per slot: who holds it, or null. */
  slots: (SlotHolder | null)[];
  /** Pipelines waiting for a slot of this GPU, in arrival order. */
  waiting: string[];
  memoryBudgetBytes: number | null;
  /** Last memory snapshot, when NVML (or /proc/meminfo) gave one. */
  memory: { usedBytes: number; totalBytes: number } | null;
}

export interface RunningStep {
  pipeline: string;
  step: string;
  device: string;
  /** Epoch ms of its gpu.step.start. */
  startedMs: number;
  attempt: number;
}

export type StepOutcome = "ok" | "failed" | "skipped";

export interface FailedStep {
  pipeline: string;
  step: string;
  device: string;
  status: string;
  exitCode: number | null;
  signal: string | null;
}

export interface OutputLine {
  pipeline: string;
  step: string;
  stream: "stdout" | "stderr";
  line: string;
}

export interface RunState {
  run: string | null;
  /** Epoch ms of run.start (or the first event). */
  startedMs: number | null;
  ended: boolean;
  lanes: Lane[];
  /** Steps of the selected pipelines. */
  totalSteps: number;
  /** Final outcome per `pipeline/step`; a retry removes the entry until the next attempt ends. */
  outcomes: Record<string, StepOutcome>;
  /** Running steps by `pipeline/step`. */
  running: Record<string, RunningStep>;
  /** Failures in the order they happened. */
  failures: FailedStep[];
  /** The last few lines steps printed. */
  output: OutputLine[];
}

export interface StepCounts {
  total: number;
  done: number;
  ok: number;
  failed: number;
  skipped: number;
  running: number;
  waiting: number;
}

/** The empty state for a plan: one lane per registry GPU, plus a CPU lane when a selected pipeline or step uses the CPU. */
export function createRunState(plan: GpuplanPlan, pipelines: readonly string[]): RunState {
  const selected = plan.pipelines.filter((p) => pipelines.includes(p.name));
  const lanes: Lane[] = plan.registry.map((entry) => ({
    id: entry.gpu,
    name: entry.name,
    slotCount: entry.maxPipelines,
    slots: Array.from({ length: entry.maxPipelines }, () => null),
    waiting: [],
    memoryBudgetBytes: entry.memoryBudgetBytes,
    memory: null,
  }));
  const usesCpu = selected.some((p) => p.gpu === null || p.steps.some((s) => s.device === CPU_LANE));
  if (usesCpu) lanes.push(cpuLane());
  return {
    run: null,
    startedMs: null,
    ended: false,
    lanes,
    totalSteps: selected.reduce((n, p) => n + p.steps.length, 0),
    outcomes: {},
    running: {},
    failures: [],
    output: [],
  };
}

function cpuLane(): Lane {
  return {
    id: CPU_LANE,
    name: "",
    slotCount: 0,
    slots: [],
    waiting: [],
    memoryBudgetBytes: null,
    memory: null,
  };
}

/** Counts for the progress line, derived from the state. */
export function countSteps(state: RunState): StepCounts {
  let ok = 0;
  let failed = 0;
  let skipped = 0;
  for (const outcome of Object.values(state.outcomes)) {
    if (outcome === "ok") ok++;
    else if (outcome === "failed") failed++;
    else skipped++;
  }
  return {
    total: state.totalSteps,
    done: ok + failed + skipped,
    ok,
    failed,
    skipped,
    running: Object.keys(state.running).length,
    waiting: state.lanes.reduce((n, lane) => n + lane.waiting.length, 0),
  };
}

/** The lane a device belongs to: cuda:2 → cuda:2, cuda:0/mig1 → its own lane if the registry has it, else cuda:0. */
export function laneIdOf(state: RunState, device: string | null): string | null {
  if (device === null) return null;
  if (state.lanes.some((l) => l.id === device)) return device;
  const parent = device.split("/")[0] ?? device;
  if (state.lanes.some((l) => l.id === parent)) return parent;
  return device === CPU_LANE ? CPU_LANE : null;
}

/** The next state after one event. Never mutates `state`; unknown events and fields leave it as is. */
export function reduceRunState(state: RunState, event: RunEvent): RunState {
  const ts = Date.parse(event.ts);
  const base: RunState =
    state.startedMs === null && Number.isFinite(ts) ? { ...state, startedMs: ts, run: event.run } : state;
  switch (event.event) {
    case "run.start":
      return { ...base, run: event.run, startedMs: Number.isFinite(ts) ? ts : base.startedMs, ended: false };
    case "run.end":
      return { ...base, ended: true, running: {}, lanes: base.lanes.map((l) => ({ ...l, waiting: [] })) };
    case "gpu.lock.wait":
      return onLockWait(base, event);
    case "gpu.lock.acquired":
      return onLockAcquired(base, event);
    case "gpu.lock.released":
      return onLockReleased(base, event);
    case "gpu.step.start":
      return onStepStart(base, event, ts);
    case "gpu.step.end":
      return onStepEnd(base, event);
    case "gpu.step.skip":
      return withOutcome(base, event, "skipped");
    case "gpu.step.retry":
      return onRetry(base, event);
    case "gpu.memory.snapshot":
      return onMemory(base, event);
    default:
      return base;
  }
}

/** Keep the last `max` output lines (the live view shows a few). */
export function appendOutput(state: RunState, line: OutputLine, max = 5): RunState {
  return { ...state, output: [...state.output, line].slice(-max) };
}

function stepKey(pipeline: string, step: string): string {
  return `${pipeline}/${step}`;
}

function updateLane(state: RunState, id: string | null, update: (lane: Lane) => Lane): RunState {
  if (id === null || !state.lanes.some((l) => l.id === id)) return state;
  return { ...state, lanes: state.lanes.map((l) => (l.id === id ? update(l) : l)) };
}

function lockLane(state: RunState, event: RunEvent): string | null {
  return laneIdOf(state, readString(event, "gpu") ?? event.device);
}

function onLockWait(state: RunState, event: RunEvent): RunState {
  const pipeline = event.pipeline;
  if (pipeline === null) return state;
  return updateLane(state, lockLane(state, event), (lane) =>
    lane.waiting.includes(pipeline) ? lane : { ...lane, waiting: [...lane.waiting, pipeline] },
  );
}

function onLockAcquired(state: RunState, event: RunEvent): RunState {
  const pipeline = event.pipeline;
  if (pipeline === null) return state;
  return updateLane(state, lockLane(state, event), (lane) => {
    const slots = lane.slots.map((s) => (s?.pipeline === pipeline && s.implicit ? null : s));
    const numbers = readSlotNumbers(event) ?? [];
    const count = numbers.length > 0 ? numbers.length : (readSlotCount(event) ?? 1);
    const exclusive = count > 1 && count >= lane.slotCount;
    const holder: SlotHolder = { pipeline, exclusive, implicit: false };
    if (numbers.length > 0) {
      for (const n of numbers) if (n < slots.length) slots[n] = holder;
    } else {
      // No slot numbers: fill free slots, counting the ones this pipeline already has.
      let have = slots.filter((s) => s?.pipeline === pipeline).length;
      for (let i = 0; i < slots.length && have < count; i++) {
        if (slots[i] === null) {
          slots[i] = holder;
          have++;
        }
      }
    }
    const marked = slots.map((s) => (s?.pipeline === pipeline ? { ...s, exclusive } : s));
    return { ...lane, slots: marked, waiting: lane.waiting.filter((p) => p !== pipeline) };
  });
}

function onLockReleased(state: RunState, event: RunEvent): RunState {
  const pipeline = event.pipeline;
  if (pipeline === null) return state;
  return updateLane(state, lockLane(state, event), (lane) => {
    const numbers = readSlotNumbers(event);
    const freeAll = numbers === null || numbers.length === 0;
    const slots = lane.slots.map((s, i) =>
      s?.pipeline === pipeline && (freeAll || numbers.includes(i)) ? null : s,
    );
    const stillExclusive = slots.filter((s) => s?.pipeline === pipeline).length >= lane.slotCount;
    return {
      ...lane,
      slots: slots.map((s) => (s?.pipeline === pipeline ? { ...s, exclusive: stillExclusive } : s)),
      waiting: freeAll ? lane.waiting.filter((p) => p !== pipeline) : lane.waiting,
    };
  });
}

function onStepStart(state: RunState, event: RunEvent, ts: number): RunState {
  const { pipeline, step } = event;
  if (pipeline === null || step === null) return state;
  const key = stepKey(pipeline, step);
  const device = event.device ?? CPU_LANE;
  const { [key]: _previous, ...outcomes } = state.outcomes;
  const running: RunningStep = {
    pipeline,
    step,
    device,
    startedMs: Number.isFinite(ts) ? ts : (state.startedMs ?? 0),
    attempt: readNumber(event, "attempt") ?? 1,
  };
  let next: RunState = { ...state, outcomes, running: { ...state.running, [key]: running } };
  const laneId = laneIdOf(next, device);
  if (laneId === CPU_LANE && !next.lanes.some((l) => l.id === CPU_LANE)) {
    next = { ...next, lanes: [...next.lanes, cpuLane()] };
  }
  // A step on a GPU lane whose pipeline holds no slot there (no lock events): show it in a free slot anyway.
  return updateLane(next, laneId, (lane) => {
    if (lane.slotCount === 0 || lane.slots.some((s) => s?.pipeline === pipeline)) return lane;
    const free = lane.slots.indexOf(null);
    if (free < 0) return lane;
    const slots = [...lane.slots];
    slots[free] = { pipeline, exclusive: false, implicit: true };
    return { ...lane, slots };
  });
}

function onStepEnd(state: RunState, event: RunEvent): RunState {
  const { pipeline, step } = event;
  if (pipeline === null || step === null) return state;
  const status = readStatus(event);
  const key = stepKey(pipeline, step);
  const device = event.device ?? state.running[key]?.device ?? CPU_LANE;
  let next = withOutcome(state, event, status === "ok" ? "ok" : "failed");
  if (status !== "ok") {
    const failure: FailedStep = {
      pipeline,
      step,
      device,
      status,
      exitCode: readNumber(event, "exitCode"),
      signal: readString(event, "signal"),
    };
    next = { ...next, failures: [...next.failures, failure] };
  }
  return updateLane(next, laneIdOf(next, device), (lane) =>
    lane.slots.some((s) => s?.pipeline === pipeline && s.implicit)
      ? { ...lane, slots: lane.slots.map((s) => (s?.pipeline === pipeline && s.implicit ? null : s)) }
      : lane,
  );
}

function withOutcome(state: RunState, event: RunEvent, outcome: StepOutcome): RunState {
  const { pipeline, step } = event;
  if (pipeline === null || step === null) return state;
  const key = stepKey(pipeline, step);
  const { [key]: _done, ...running } = state.running;
  return { ...state, running, outcomes: { ...state.outcomes, [key]: outcome } };
}

function onRetry(state: RunState, event: RunEvent): RunState {
  const { pipeline, step } = event;
  if (pipeline === null || step === null) return state;
  const key = stepKey(pipeline, step);
  // The failed attempt is not the step's outcome after all: drop its outcome and its (latest) failure entry.
  const { [key]: _failed, ...outcomes } = state.outcomes;
  const last = state.failures.findLastIndex((f) => f.pipeline === pipeline && f.step === step);
  const failures = state.failures.filter((_, i) => i !== last);
  return { ...state, outcomes, failures };
}

function onMemory(state: RunState, event: RunEvent): RunState {
  let next = state;
  for (const reading of readMemory(event)) {
    next = updateLane(next, laneIdOf(next, reading.gpu), (lane) => ({
      ...lane,
      memory: { usedBytes: reading.usedBytes, totalBytes: reading.totalBytes },
    }));
  }
  return next;
}
