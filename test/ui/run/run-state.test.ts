import { describe, expect, it } from "vitest";
import type { RunEvent, RunEventName } from "../../../src/run/record/events.js";
import { reduceRunState } from "../../../src/ui/run/reduce-run-state.js";
import { appendOutput, countSteps, createRunState, type RunState } from "../../../src/ui/run/run-state.js";
import {
  ALL_PIPELINES,
  busyEvents,
  type EventFields,
  ev,
  failureEvents,
  GIB_BYTES,
  makePlan,
  T0,
} from "./fixtures.js";

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

  it("gives every slot of the pipeline back on its release, and drops exclusivity on a partial one", () => {
    let state = stateAfter(busyEvents());
    state = reduceRunState(
      state,
      ev(1, "gpu.lock.released", "train", "fit", "cuda:1", { gpu: "cuda:1", slots: [1], exclusive: true }),
    );
    expect(lane(state, "cuda:1").slots).toEqual([
      { pipeline: "train", exclusive: false, implicit: false },
      null,
    ]);
    state = reduceRunState(
      state,
      ev(2, "gpu.lock.released", "train", null, "cuda:1", { gpu: "cuda:1", slots: [0], exclusive: false }),
    );
    expect(lane(state, "cuda:1").slots).toEqual([null, null]);
  });

  it("fills the slots acquired names", () => {
    const state = stateAfter([
      ev(0, "gpu.lock.acquired", "plate-1", null, "cuda:0", {
        gpu: "cuda:0",
        slots: [0],
        waitedMs: 0,
        exclusive: false,
      }),
    ]);
    expect(lane(state, "cuda:0").slots.map((s) => s?.pipeline ?? null)).toEqual(["plate-1", null]);
  });

  it("shows a GPU step that started without lock events in a free slot until it ends", () => {
    let state = stateAfter([
      ev(0, "gpu.step.start", "plate-1", "segment", "cuda:0", { attempt: 1, logPath: "a.log" }),
    ]);
    expect(lane(state, "cuda:0").slots[0]).toEqual({ pipeline: "plate-1", exclusive: false, implicit: true });
    state = reduceRunState(
      state,
      ev(5, "gpu.step.end", "plate-1", "segment", "cuda:0", {
        status: "ok",
        exitCode: 0,
        signal: null,
        durationMs: 5,
        attempt: 1,
      }),
    );
    expect(lane(state, "cuda:0").slots).toEqual([null, null]);
  });

  it("adds a CPU lane when a step falls back to the CPU", () => {
    const state = stateAfter(
      [ev(0, "gpu.step.start", "plate-1", "segment", "cpu", { attempt: 2, logPath: "a@2.log" })],
      ["plate-1"],
    );
    expect(state.lanes.map((l) => l.id)).toEqual(["cuda:0", "cuda:1", "cpu"]);
    expect(state.running["plate-1/segment"]?.device).toBe("cpu");
  });

  it("reads memory snapshots: a GPU's used memory, total minus free when only that is known, and the host's", () => {
    const state = stateAfter([
      ev(0, "gpu.memory.snapshot", "train", "fit", "cuda:1", {
        at: "step.start",
        gpus: [{ gpu: "cuda:1", usedBytes: 1, freeBytes: 9, totalBytes: 10 }],
      }),
      ev(1, "gpu.memory.snapshot", "plate-1", "segment", "cuda:0", {
        at: "step.end",
        gpus: [{ gpu: "cuda:0", usedBytes: null, freeBytes: 6, totalBytes: 10 }],
      }),
      ev(2, "gpu.memory.snapshot", "report", "export", "cpu", {
        at: "step.start",
        gpus: [{ gpu: "cpu", usedBytes: 60, freeBytes: 40, totalBytes: 100 }],
      }),
    ]);
    expect(state.lanes.map((l) => l.memory)).toEqual([
      { usedBytes: 4, totalBytes: 10 },
      { usedBytes: 1, totalBytes: 10 },
      { usedBytes: 60, totalBytes: 100 },
    ]);
  });

  it("never takes an event of unknown status for one (the schema rejects it) and leaves the counts to step.end", async () => {
    const { default: validateRunEvent } = await import("../../../src/generated/run-events-validator.js");
    const end = ev(0, "gpu.step.end", "plate-1", "segment", "cuda:0", {
      status: "error",
      exitCode: 1,
      signal: null,
      durationMs: 1,
      attempt: 1,
    });
    expect(validateRunEvent(end)).toBe(true);
    expect(validateRunEvent({ ...end, status: "weird" })).toBe(false);
    let state = stateAfter([end]);
    expect(countSteps(state).failed).toBe(1);
    const same = reduceRunState(
      state,
      ev(1, "gpu.step.oom", "plate-1", "segment", "cuda:0", { framework: null, attempt: 1 }),
    );
    expect(same.tally).toBe(state.tally);
    state = reduceRunState(
      state,
      ev(2, "run.end", null, null, null, { durationMs: 2, status: "failed", ok: 0, failed: 1, skipped: 0 }),
    );
    expect(state.ended).toBe(true);
  });

  it("counts an interrupted step as neither done nor failed", () => {
    const state = stateAfter([
      ev(0, "gpu.step.start", "plate-1", "segment", "cuda:0", { attempt: 1, logPath: "a.log" }),
      ev(9, "gpu.step.end", "plate-1", "segment", "cuda:0", {
        status: "interrupted",
        exitCode: null,
        signal: "SIGINT",
        durationMs: 9,
        attempt: 1,
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
  type ModelName = Extract<RunEventName, `gpu.model.${string}`>;
  const model = <N extends ModelName>(
    atMs: number,
    name: N,
    key: string,
    fields: Omit<EventFields<N>, "model_key" | "allocated_devices">,
  ) =>
    ev<ModelName>(atMs, name, "plate-1", "segment", "cuda:0", {
      model_key: key,
      allocated_devices: ["cuda:0"],
      ...fields,
    } as EventFields<ModelName>);

  it("follows load, inference, idle and eviction", () => {
    const loading = stateAfter([model(0, "gpu.model.load_start", "cyto3", { ready_timeout_ms: 60_000 })]);
    expect(lane(loading, "cuda:0").warm).toEqual([{ key: "cyto3", state: "loading", sinceMs: T0 }]);
    const busy = stateAfter([
      model(0, "gpu.model.load_start", "cyto3", { ready_timeout_ms: 60_000 }),
      model(1000, "gpu.model.load_complete", "cyto3", { duration_ms: 1000, pid: 7 }),
      model(1001, "gpu.model.inference_start", "cyto3", { task: "t1" }),
    ]);
    expect(lane(busy, "cuda:0").warm).toEqual([{ key: "cyto3", state: "busy", sinceMs: T0 + 1001 }]);
    const idle = stateAfter([
      model(0, "gpu.model.load_start", "cyto3", { ready_timeout_ms: 60_000 }),
      model(1001, "gpu.model.inference_start", "cyto3", { task: "t1" }),
      model(1500, "gpu.model.inference_end", "cyto3", { task: "t1", duration_ms: 499, status: "ok" }),
      model(1501, "gpu.model.cache_store", "cyto3", { ttl_s: 900 }),
      model(1600, "gpu.model.load_start", "nuclei", { ready_timeout_ms: 60_000 }),
    ]);
    expect(lane(idle, "cuda:0").warm.map((w) => [w.key, w.state])).toEqual([
      ["cyto3", "idle"],
      ["nuclei", "loading"],
    ]);
    const evicted = stateAfter([
      model(0, "gpu.model.load_start", "cyto3", { ready_timeout_ms: 60_000 }),
      model(2000, "gpu.model.cache_evict", "cyto3", { reason: "replacement" }),
    ]);
    expect(lane(evicted, "cuda:0").warm).toEqual([]);
    // Other lanes are untouched.
    expect(lane(idle, "cuda:1").warm).toEqual([]);
  });
});

describe("a run on Slurm in the live view", () => {
  it("slurm.task events keep each pipeline's task state; the header counts them", async () => {
    const { headerLines } = await import("../../../src/ui/run/tui/header-lines.js");
    const { noPaint } = await import("../../../src/ui/paint.js");
    const task = (at: number, pipeline: string, state: string) =>
      ev(at, "slurm.task", pipeline, null, null, {
        job: `7_${ALL_PIPELINES.indexOf(pipeline)}`,
        state,
        reason: state === "PENDING" ? "Resources" : null,
        node: state === "PENDING" ? null : "node3",
        gpus: null,
        exitCode: null,
      });
    const state = stateAfter([
      ...ALL_PIPELINES.map((p) => task(0, p, "PENDING")),
      task(10, "plate-1", "RUNNING"),
      task(10, "plate-2", "RUNNING"),
      task(20, "plate-1", "COMPLETED"),
      task(30, "train", "TIMEOUT"),
    ]);
    expect(state.slurm).toEqual({
      "plate-1": "COMPLETED",
      "plate-2": "RUNNING",
      "plate-3": "PENDING",
      train: "TIMEOUT",
      report: "PENDING",
    });
    expect(headerLines(state, T0 + 100, 80, noPaint).at(-1)).toBe(
      "Slurm tasks: pending 2 · running 1 · done 1 · ended otherwise 1",
    );
    // A local run has no Slurm line.
    expect(headerLines(stateAfter([]), T0, 80, noPaint).join("\n")).not.toContain("Slurm");
  });
});
