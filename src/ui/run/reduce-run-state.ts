/**
 * The pure reducer behind the live view: RunState × RunEvent → RunState, reading the typed events
 * of schemas/run-events.schema.json. Steps done, failed and skipped are the core's tally
 * (run/outcome/run-tally.ts), folded here from the same events; this adds what the screen shows.
 */
import { type RunTally, tallyEvent } from "../../run/outcome/run-tally.js";
import type { RunEvent, RunEventOf } from "../../run/record/events.js";
import type { MemoryReading } from "../../schema-types/run-events.js";
import {
  CPU_LANE,
  cpuLane,
  type FailedStep,
  laneIdOf,
  type RunningStep,
  type RunState,
  type SlotHolder,
  stepKey,
  updateLane,
  type WarmWorker,
} from "./run-state.js";

/** The next state after one event. Never mutates `state`; events the view does not show leave it as is. */
export function reduceRunState(state: RunState, event: RunEvent): RunState {
  const ts = Date.parse(event.ts);
  // The counts and failures: the core's tally of the same events (what the summary is made of).
  const tally = tallyEvent(state.tally, event);
  let base: RunState = tally === state.tally ? state : withTally(state, tally);
  if (base.startedMs === null && Number.isFinite(ts)) base = { ...base, startedMs: ts, run: event.run };
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
    case "slurm.task":
      return base.slurm[event.pipeline] === event.state
        ? base
        : { ...base, slurm: { ...base.slurm, [event.pipeline]: event.state } };
    case "gpu.memory.snapshot":
      return onMemory(base, event.gpus);
    case "gpu.model.load_start":
      return onWarm(base, event, ts, "loading");
    case "gpu.model.inference_start":
    case "gpu.model.cache_reuse":
      return onWarm(base, event, ts, "busy");
    case "gpu.model.load_complete":
    case "gpu.model.inference_end":
    case "gpu.model.cache_store":
      return onWarm(base, event, ts, "idle");
    case "gpu.model.cache_evict":
    case "gpu.model.cleanup":
      return onWarm(base, event, ts, null);
    default:
      return base;
  }
}

/** The state with a new tally, and the failures it added listed as the view shows them. */
function withTally(state: RunState, tally: RunTally): RunState {
  const added = tally.failures.slice(state.tally.failures.length).map(
    (f): FailedStep => ({
      pipeline: f.pipeline,
      step: f.step,
      device: f.device,
      status: f.status,
      exitCode: f.exitCode,
      signal: f.signal,
    }),
  );
  return { ...state, tally, failures: added.length > 0 ? [...state.failures, ...added] : state.failures };
}

type LockEvent = RunEventOf<"gpu.lock.wait" | "gpu.lock.acquired" | "gpu.lock.released">;

const lockLane = (state: RunState, event: LockEvent): string | null => laneIdOf(state, event.gpu);

function onLockWait(state: RunState, event: RunEventOf<"gpu.lock.wait">): RunState {
  const pipeline = event.pipeline;
  return updateLane(state, lockLane(state, event), (lane) =>
    lane.waiting.includes(pipeline) ? lane : { ...lane, waiting: [...lane.waiting, pipeline] },
  );
}

function onLockAcquired(state: RunState, event: RunEventOf<"gpu.lock.acquired">): RunState {
  const pipeline = event.pipeline;
  return updateLane(state, lockLane(state, event), (lane) => {
    const slots = lane.slots.map((s) => (s?.pipeline === pipeline && s.implicit ? null : s));
    const exclusive = event.slots.length > 1 && event.slots.length >= lane.slotCount;
    const holder: SlotHolder = { pipeline, exclusive, implicit: false };
    for (const n of event.slots) if (n < slots.length) slots[n] = holder;
    const marked = slots.map((s) => (s?.pipeline === pipeline ? { ...s, exclusive } : s));
    return { ...lane, slots: marked, waiting: lane.waiting.filter((p) => p !== pipeline) };
  });
}

function onLockReleased(state: RunState, event: RunEventOf<"gpu.lock.released">): RunState {
  const pipeline = event.pipeline;
  return updateLane(state, lockLane(state, event), (lane) => {
    // The pipeline's own release (not an exclusive step's downgrade) ends its wait too.
    const freeAll = event.step === null;
    const slots = lane.slots.map((s, i) =>
      s?.pipeline === pipeline && (freeAll || event.slots.includes(i)) ? null : s,
    );
    const stillExclusive = slots.filter((s) => s?.pipeline === pipeline).length >= lane.slotCount;
    return {
      ...lane,
      slots: slots.map((s) => (s?.pipeline === pipeline ? { ...s, exclusive: stillExclusive } : s)),
      waiting: freeAll ? lane.waiting.filter((p) => p !== pipeline) : lane.waiting,
    };
  });
}

function onStepStart(state: RunState, event: RunEventOf<"gpu.step.start">, ts: number): RunState {
  const { pipeline, step, device } = event;
  const key = stepKey(pipeline, step);
  const running: RunningStep = {
    pipeline,
    step,
    device,
    startedMs: Number.isFinite(ts) ? ts : (state.startedMs ?? 0),
    attempt: event.attempt,
  };
  let next: RunState = { ...state, running: { ...state.running, [key]: running } };
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

/** The attempt is over: it no longer runs (whether it counts, and how, is the tally's). */
function onStepEnd(state: RunState, event: RunEventOf<"gpu.step.end">): RunState {
  const { pipeline, step, device } = event;
  const { [stepKey(pipeline, step)]: _ended, ...running } = state.running;
  return updateLane({ ...state, running }, laneIdOf(state, device), (lane) =>
    lane.slots.some((s) => s?.pipeline === pipeline && s.implicit)
      ? { ...lane, slots: lane.slots.map((s) => (s?.pipeline === pipeline && s.implicit ? null : s)) }
      : lane,
  );
}

/** The lanes' memory from a snapshot: used, or total minus free when only that is known. */
function onMemory(state: RunState, readings: readonly MemoryReading[]): RunState {
  let next = state;
  for (const r of readings) {
    const usedBytes = r.usedBytes ?? (r.freeBytes !== null ? r.totalBytes - r.freeBytes : null);
    if (usedBytes === null || r.totalBytes <= 0) continue;
    next = updateLane(next, laneIdOf(next, r.gpu), (lane) => ({
      ...lane,
      memory: { usedBytes, totalBytes: r.totalBytes },
    }));
  }
  return next;
}

type ModelEvent = RunEventOf<Extract<RunEvent["event"], `gpu.model.${string}`>>;

/** A warm worker changes state on its device's lane; null removes it (evicted, cleaned up). */
function onWarm(state: RunState, event: ModelEvent, ts: number, next: WarmWorker["state"] | null): RunState {
  const key = event.model_key;
  const sinceMs = Number.isFinite(ts) ? ts : (state.startedMs ?? 0);
  return updateLane(state, laneIdOf(state, event.device), (lane) => {
    const others = lane.warm.filter((w) => w.key !== key);
    if (next === null) return { ...lane, warm: others };
    const at = lane.warm.findIndex((w) => w.key === key);
    const worker: WarmWorker = { key, state: next, sinceMs };
    const warm = at < 0 ? [...lane.warm, worker] : lane.warm.map((w, i) => (i === at ? worker : w));
    return { ...lane, warm };
  });
}
