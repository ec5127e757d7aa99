/**
 * What the live view shows, as data, built by reduceRunState (reduce-run-state.ts) from the events
 * alone — no clocks, no I/O — so every screen state can be built from an event list in a test.
 * Elapsed times are computed at render time from `startedMs` and the clock the renderer is given.
 */
import { createTally, type RunTally, type StepFailure } from "../../run/outcome/run-tally.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";

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
  /** Warm workers on this device, from the gpu.model.* events, in the order they were loaded. */
  warm: WarmWorker[];
}

/** A warm worker as the view shows it: its model key and what it is doing since when. */
export interface WarmWorker {
  key: string;
  state: "loading" | "busy" | "idle";
  /** Epoch ms the current state began (idle time is measured from here). */
  sinceMs: number;
}

export interface RunningStep {
  pipeline: string;
  step: string;
  device: string;
  /** Epoch ms of its gpu.step.start. */
  startedMs: number;
  attempt: number;
}

/** A failure as the live view lists it. */
export type FailedStep = Pick<StepFailure, "pipeline" | "step" | "device" | "status" | "exitCode" | "signal">;

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
  /** Steps ok, failed and skipped: the core's tally of the events (what the summary is made of). */
  tally: RunTally;
  /** Running steps by `pipeline/step`. */
  running: Record<string, RunningStep>;
  /** The tally's failures in the order they happened, as the view lists them. */
  failures: FailedStep[];
  /** The last few lines steps printed. */
  output: OutputLine[];
  /** On Slurm (run --executor slurm): each pipeline's task state as squeue last said (slurm.task events). */
  slurm: Record<string, string>;
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
    warm: [],
  }));
  const usesCpu = selected.some((p) => p.gpu === null || p.steps.some((s) => s.device === CPU_LANE));
  if (usesCpu) lanes.push(cpuLane());
  return {
    run: null,
    startedMs: null,
    ended: false,
    lanes,
    totalSteps: selected.reduce((n, p) => n + p.steps.length, 0),
    tally: createTally(selected),
    running: {},
    failures: [],
    output: [],
    slurm: {},
  };
}

/** The CPU lane: no slots, it lists what runs on the CPU. */
export function cpuLane(): Lane {
  return {
    id: CPU_LANE,
    name: "",
    slotCount: 0,
    slots: [],
    waiting: [],
    memoryBudgetBytes: null,
    memory: null,
    warm: [],
  };
}

/** Counts for the progress line, derived from the state. */
export function countSteps(state: RunState): StepCounts {
  const { ok, failed, skipped } = state.tally;
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

/** Keep the last `max` output lines (the live view shows a few). */
export function appendOutput(state: RunState, line: OutputLine, max = 5): RunState {
  return { ...state, output: [...state.output, line].slice(-max) };
}

/** `pipeline/step`, the key of outcomes and running steps. */
export function stepKey(pipeline: string, step: string): string {
  return `${pipeline}/${step}`;
}

/** The state with one lane replaced; unchanged when there is no such lane. */
export function updateLane(state: RunState, id: string | null, update: (lane: Lane) => Lane): RunState {
  if (id === null || !state.lanes.some((l) => l.id === id)) return state;
  return { ...state, lanes: state.lanes.map((l) => (l.id === id ? update(l) : l)) };
}
