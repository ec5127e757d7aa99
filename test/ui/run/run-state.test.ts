import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../src/run/record/events.js";
import { reduceRunState } from "../../../src/ui/run/reduce-run-state.js";
import { appendOutput, countSteps, createRunState, type RunState } from "../../../src/ui/run/run-state.js";
import { ALL_PIPELINES, busyEvents, ev, failureEvents, GIB_BYTES, makePlan, T0 } from "./fixtures.js";

function stateAfter(events: RunEvent[], pipelines = ALL_PIPELINES): RunState {
  return events.reduce(reduceRunState, createRunState(makePlan(), pipelines));
}

function lane(state: RunState, id: string) {
  const found = state.lanes.find((l) => l.id === id);
  if (!found) throw new Error(`no lane ${id}`);
  return found;
}

describe("createRunState", () => {
  it("has one lane per registry GPU with its slots, and a CPU lane when a selected pipeline needs one", () => {
    const state = createRunState(makePlan(), ALL_PIPELINES);
    expect(state.lanes.map((l) => [l.id, l.slotCount, l.slots.length])).toEqual([
      ["cuda:0", 2, 2],
      ["cuda:1", 2, 2],
      ["cpu", 0, 0],
    ]);
    expect(state.totalSteps).toBe(8);
  });

  it("counts only the selected pipelines' steps and leaves the CPU lane out when none uses it", () => {
    const state = createRunState(makePlan(), ["plate-1", "train"]);
    expect(state.totalSteps).toBe(3);
    expect(state.lanes.map((l) => l.id)).toEqual(["cuda:0", "cuda:1"]);
  });
});

describe("reduceRunState", () => {
  it("does not mutate the state it is given", () => {
    const before = createRunState(makePlan(), ALL_PIPELINES);
    const frozen = structuredClone(before);
    busyEvents().reduce(reduceRunState, before);
    expect(before).toEqual(frozen);
  });

  it("tracks slots, waiters, running steps and memory", () => {
    const state = stateAfter(busyEvents());
    expect(state.run).toBe("20261122-010000-abcd");
    expect(state.startedMs).toBe(T0);
    const gpu0 = lane(state, "cuda:0");
    expect(gpu0.slots.map((s) => s?.pipeline ?? null)).toEqual(["plate-1", "plate-2"]);
    expect(gpu0.waiting).toEqual(["plate-3"]);
    expect(gpu0.memory).toEqual({ usedBytes: 30 * GIB_BYTES, totalBytes: 80 * GIB_BYTES });
    const gpu1 = lane(state, "cuda:1");
    expect(gpu1.slots.map((s) => s && { pipeline: s.pipeline, exclusive: s.exclusive })).toEqual([
      { pipeline: "train", exclusive: true },
      { pipeline: "train", exclusive: true },
    ]);
    expect(Object.keys(state.running).sort()).toEqual(["plate-1/segment", "plate-2/segment", "train/fit"]);
    expect(countSteps(state)).toEqual({
      total: 8,
      done: 1,
      ok: 1,
      failed: 0,
      skipped: 0,
      running: 3,
      waiting: 1,
    });
  });

  it("counts a failure once, forgets a failed attempt that is retried, and counts skips", () => {
    const state = stateAfter(failureEvents());
    expect(countSteps(state)).toEqual({
      total: 8,
      done: 3,
      ok: 1,
      failed: 1,
      skipped: 1,
      running: 2,
      waiting: 0,
    });
    expect(state.failures).toEqual([
      { pipeline: "plate-1", step: "segment", device: "cuda:0", status: "oom", exitCode: 1, signal: null },
    ]);
    expect(state.running["plate-2/segment"]?.attempt).toBe(2);
    expect(lane(state, "cuda:0").slots.map((s) => s?.pipeline ?? null)).toEqual(["plate-3", "plate-2"]);
  });

  it("gives every slot back on a release without slot numbers, and drops exclusivity on a partial one", () => {
    let state = stateAfter(busyEvents());
    state = reduceRunState(
      state,
      ev(1, "gpu.lock.released", "train", "fit", "cuda:1", { gpu: "cuda:1", slots: [1] }),
    );
    expect(lane(state, "cuda:1").slots).toEqual([
      { pipeline: "train", exclusive: false, implicit: false },
      null,
    ]);
    state = reduceRunState(state, ev(2, "gpu.lock.released", "train", null, "cuda:1", { gpu: "cuda:1" }));
    expect(lane(state, "cuda:1").slots).toEqual([null, null]);
  });

  it("fills free slots when acquired gives a count instead of slot numbers", () => {
    const state = stateAfter([
      ev(0, "gpu.lock.acquired", "plate-1", null, "cuda:0", { gpu: "cuda:0", slots: 1 }),
    ]);
    expect(lane(state, "cuda:0").slots.map((s) => s?.pipeline ?? null)).toEqual(["plate-1", null]);
  });

  it("shows a GPU step that started without lock events in a free slot until it ends", () => {
    let state = stateAfter([ev(0, "gpu.step.start", "plate-1", "segment", "cuda:0", { attempt: 1 })]);
    expect(lane(state, "cuda:0").slots[0]).toEqual({ pipeline: "plate-1", exclusive: false, implicit: true });
    state = reduceRunState(
      state,
      ev(5, "gpu.step.end", "plate-1", "segment", "cuda:0", { status: "ok", exitCode: 0, durationMs: 5 }),
    );
    expect(lane(state, "cuda:0").slots).toEqual([null, null]);
  });

  it("adds a CPU lane when a step falls back to the CPU", () => {
    const state = stateAfter(
      [ev(0, "gpu.step.start", "plate-1", "segment", "cpu", { attempt: 2 })],
      ["plate-1"],
    );
    expect(state.lanes.map((l) => l.id)).toEqual(["cuda:0", "cuda:1", "cpu"]);
    expect(state.running["plate-1/segment"]?.device).toBe("cpu");
  });

  it("reads a flat memory snapshot and the CPU's /proc/meminfo form", () => {
    const state = stateAfter([
      ev(0, "gpu.memory.snapshot", null, null, "cuda:1", { usedBytes: 1, freeBytes: 9, totalBytes: 10 }),
      ev(1, "gpu.memory.snapshot", null, null, null, {
        gpus: [{ gpu: "cuda:0", usedBytes: null, freeBytes: 6, totalBytes: 10 }],
        cpu: { totalBytes: 100, availableBytes: 40 },
      }),
    ]);
    expect(state.lanes.map((l) => l.memory)).toEqual([
      { usedBytes: 4, totalBytes: 10 },
      { usedBytes: 1, totalBytes: 10 },
      { usedBytes: 60, totalBytes: 100 },
    ]);
  });

  it("treats an unknown status as a failure and ignores events it does not know", () => {
    let state = stateAfter([ev(0, "gpu.step.end", "plate-1", "segment", "cuda:0", { status: "weird" })]);
    expect(countSteps(state).failed).toBe(1);
    const same = reduceRunState(state, { ...ev(1, "run.start", null, null, null), event: "gpu.step.oom" });
    expect(same.outcomes).toBe(state.outcomes);
    state = reduceRunState(state, ev(2, "run.end", null, null, null));
    expect(state.ended).toBe(true);
  });

  it("counts an interrupted step as neither done nor failed", () => {
    const state = stateAfter([
      ev(0, "gpu.step.start", "plate-1", "segment", "cuda:0", { attempt: 1 }),
      ev(9, "gpu.step.end", "plate-1", "segment", "cuda:0", {
        status: "interrupted",
        exitCode: null,
        signal: "SIGINT",
      }),
    ]);
    expect(countSteps(state)).toMatchObject({ done: 0, failed: 0, running: 0 });
    expect(state.failures).toEqual([]);
  });

  it("keeps only the last few output lines", () => {
    let state = createRunState(makePlan(), ALL_PIPELINES);
    for (let i = 0; i < 8; i++) {
      state = appendOutput(state, {
        pipeline: "plate-1",
        step: "segment",
        stream: "stdout",
        line: `line ${i}`,
      });
    }
    expect(state.output.map((o) => o.line)).toEqual(["line 3", "line 4", "line 5", "line 6", "line 7"]);
  });
});

describe("warm workers in their GPU's lane", () => {
  const model = (
    atMs: number,
    name: Parameters<typeof ev>[1],
    key: string,
    fields: Record<string, unknown> = {},
  ) =>
    ev(atMs, name, "plate-1", "segment", "cuda:0", {
      model_key: key,
      allocated_devices: ["cuda:0"],
      ...fields,
    });

  it("follows load, inference, idle and eviction", () => {
    const loading = stateAfter([model(0, "gpu.model.load_start", "cyto3")]);
    expect(lane(loading, "cuda:0").warm).toEqual([{ key: "cyto3", state: "loading", sinceMs: T0 }]);
    const busy = stateAfter([
      model(0, "gpu.model.load_start", "cyto3"),
      model(1000, "gpu.model.load_complete", "cyto3"),
      model(1001, "gpu.model.inference_start", "cyto3"),
    ]);
    expect(lane(busy, "cuda:0").warm).toEqual([{ key: "cyto3", state: "busy", sinceMs: T0 + 1001 }]);
    const idle = stateAfter([
      model(0, "gpu.model.load_start", "cyto3"),
      model(1001, "gpu.model.inference_start", "cyto3"),
      model(1500, "gpu.model.inference_end", "cyto3", { status: "ok" }),
      model(1501, "gpu.model.cache_store", "cyto3", { ttl_s: 900 }),
      model(1600, "gpu.model.load_start", "nuclei"),
    ]);
    expect(lane(idle, "cuda:0").warm.map((w) => [w.key, w.state])).toEqual([
      ["cyto3", "idle"],
      ["nuclei", "loading"],
    ]);
    const evicted = stateAfter([
      model(0, "gpu.model.load_start", "cyto3"),
      model(2000, "gpu.model.cache_evict", "cyto3", { reason: "replacement" }),
    ]);
    expect(lane(evicted, "cuda:0").warm).toEqual([]);
    // Other lanes are untouched.
    expect(lane(idle, "cuda:1").warm).toEqual([]);
  });
});
