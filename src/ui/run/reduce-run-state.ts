/**
 * The pure reducer behind the live view: RunState × RunEvent → RunState. Tolerant: unknown events
 * and missing fields leave the state as it is (see event-fields.ts for what is read).
 */
import type { RunEvent } from "../../run/record/events.js";
import {
  readMemory,
  readNumber,
  readSlotCount,
  readSlotNumbers,
  readStatus,
  readString,
} from "./event-fields.js";
import {
  CPU_LANE,
  cpuLane,
  type FailedStep,
  laneIdOf,
  type RunningStep,
  type RunState,
  type SlotHolder,
  type StepOutcome,
  stepKey,
  updateLane,
  type WarmWorker,
} from "./run-state.js";

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
  let next: RunState;
  if (status === "interrupted") {
    // Not an outcome: the step did not fail, and --resume will run it again.
    const { [key]: _stopped, ...running } = state.running;
    next = { ...state, running };
  } else {
    next = withOutcome(state, event, status === "ok" ? "ok" : "failed");
  }
  if (status !== "ok" && status !== "interrupted") {
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

/** A warm worker changes state on its device's lane; null removes it (evicted, cleaned up). */
function onWarm(state: RunState, event: RunEvent, ts: number, next: WarmWorker["state"] | null): RunState {
  const key = readString(event, "model_key");
  if (key === null) return state;
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
