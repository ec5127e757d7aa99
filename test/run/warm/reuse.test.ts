import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { execute, type Harness } from "../helpers/harness.js";
import { count, modelEvents, warmPlan, workerRecords, workerStep } from "./helpers.js";

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

describe("warm workers: reuse", () => {
  it("same key across 10 pipelines on one GPU: one load, ten tasks in one process, one slot", async () => {
    const plan = warmPlan(
      workerStep("seg", { key: "cyto3", load: 200, args: ["--plate", "{n}"] }),
      undefined,
      10,
    );
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 10, failed: 0 });
    expect(count(h.events, "gpu.model.load_start")).toBe(1);
    expect(count(h.events, "gpu.model.load_complete")).toBe(1);
    expect(count(h.events, "gpu.model.cache_reuse")).toBe(9);
    expect(count(h.events, "gpu.model.inference_end")).toBe(10);
    expect(count(h.events, "gpu.model.cache_store")).toBe(10);
    // The one eviction is the end of the run.
    expect(h.events.filter((e) => e.event === "gpu.model.cache_evict").map((e) => e.reason)).toEqual([
      "shutdown",
    ]);
    const records = workerRecords(h.dir);
    const tasks = records.filter((r) => r.what === "task");
    expect(records.filter((r) => r.what === "load")).toHaveLength(1);
    expect(new Set(tasks.map((t) => t.pid)).size).toBe(1);
    // Task args: the pipeline's matrix values and the step's own run words.
    expect(tasks.map((t) => t.args)).toContainEqual(["--plate", "7"]);
    expect(tasks.find((t) => t.pipeline === "p-7")?.matrix).toEqual({ n: "7" });
    // Every model event names its key and devices.
    for (const e of h.events.filter((e) => e.event.startsWith("gpu.model."))) {
      expect("model_key" in e && e.model_key).toBe("cyto3");
      expect("allocated_devices" in e && e.allocated_devices).toEqual(["cuda:0"]);
    }
    // The slot: one at a time, all given back, and the worker's end before the run's.
    expect(h.lock.peak.get("cuda:0")).toBe(1);
    expect(h.lock.held.get("cuda:0")).toBe(0);
    expect(records.at(-1)?.what).toBe("exit");
    const names = h.events.map((e) => e.event);
    expect(names.indexOf("gpu.model.cleanup")).toBeLessThan(names.indexOf("run.end"));
  });

  it("worker output that is not protocol goes to the step log; the worker's own log has it all", async () => {
    h = await execute(warmPlan(workerStep("seg")));
    const log = readFileSync(join(h.runDir, "logs", "p-1@seg.log"), "utf8");
    expect(log).toContain("loading the model");
    expect(log).toContain("working on p-1");
    expect(log).not.toContain('"ok":true');
    expect(existsSync(join(h.runDir, "logs", "workers", "seg@cuda_0.log"))).toBe(true);
  });

  it("ttl shorter than the gap between tasks: expired, then a second load", async () => {
    const steps =
      workerStep("a", { key: "m", keepWarm: "{ ttl: 100ms }" }) +
      `
      - id: gap
        run: [node, ../record.mjs, gap, "400"]
        memory: numpy` +
      workerStep("b", { key: "m", keepWarm: "{ ttl: 100ms }" });
    h = await execute(warmPlan(steps), { baseDir: join(import.meta.dirname, "../../../fixtures/run/warm") });
    expect(h.summary).toMatchObject({ ok: 3, failed: 0 });
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
    expect(count(h.events, "gpu.model.cache_evict", "expired")).toBe(1);
  });

  it("a ttl longer than the gap keeps the worker", async () => {
    const steps =
      workerStep("a", { key: "m", keepWarm: "{ ttl: 5s }" }) +
      workerStep("b", { key: "m", keepWarm: "{ ttl: 5s }" });
    h = await execute(warmPlan(steps));
    expect(count(h.events, "gpu.model.load_start")).toBe(1);
    expect(count(h.events, "gpu.model.cache_reuse")).toBe(1);
  });

  it("keep_warm: false stops the worker after its task (caller_disabled)", async () => {
    const steps =
      workerStep("a", { key: "m", keepWarm: "false" }) + workerStep("b", { key: "m", keepWarm: "false" });
    h = await execute(warmPlan(steps));
    expect(h.summary.ok).toBe(2);
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
    expect(count(h.events, "gpu.model.cache_evict", "caller_disabled")).toBe(2);
    expect(count(h.events, "gpu.model.cache_store")).toBe(0);
  });

  it("two keys alternating on one GPU: each load replaces the other (max_warm_per_gpu 1)", async () => {
    const steps = ["a", "b", "c", "d"].map((id, i) => workerStep(id, { key: i % 2 ? "B" : "A" })).join("");
    h = await execute(warmPlan(steps));
    expect(h.summary.ok).toBe(4);
    expect(count(h.events, "gpu.model.load_start")).toBe(4);
    expect(count(h.events, "gpu.model.cache_evict", "replacement")).toBe(3);
    expect(modelEvents(h.events).at(-2)).toBe("gpu.model.cache_evict shutdown");
  });

  it("with max_warm_per_gpu: 2 both keys stay warm", async () => {
    const steps = ["a", "b", "c", "d"].map((id, i) => workerStep(id, { key: i % 2 ? "B" : "A" })).join("");
    h = await execute(warmPlan(steps, "max_pipelines_per_gpu: 1, max_warm_per_gpu: 2"));
    expect(count(h.events, "gpu.model.load_start")).toBe(2);
    expect(count(h.events, "gpu.model.cache_evict", "replacement")).toBe(0);
    expect(count(h.events, "gpu.model.cache_evict", "shutdown")).toBe(2);
  });

  it("an exclusive step on the GPU evicts its warm workers first", async () => {
    const steps =
      workerStep("a", { key: "m" }) +
      `
      - id: x
        run: [node, ../record.mjs, x, "10"]
        memory: torch
        vram: 1GiB
        exclusive: true`;
    h = await execute(warmPlan(steps, "max_pipelines_per_gpu: 2"), {
      baseDir: join(import.meta.dirname, "../../../fixtures/run/warm"),
    });
    expect(h.summary.ok).toBe(2);
    const names = h.events.map((e) => `${e.event}${"reason" in e ? ` ${e.reason}` : ""}`);
    expect(names.indexOf("gpu.model.cache_evict replacement")).toBeGreaterThan(-1);
    expect(names.indexOf("gpu.model.cache_evict replacement")).toBeLessThan(
      h.events.findIndex((e) => e.event === "gpu.step.start" && e.step === "x"),
    );
  });

  it("on 2 slots a warm worker lives in a pipeline's slot: never more holders than slots, all freed", async () => {
    const plan = warmPlan(
      workerStep("seg", { key: "m", args: ["--sleep", "30"] }) +
        `
      - id: after
        run: [node, ../record.mjs, after, "30"]
        memory: torch
        vram: 1GiB`,
      "max_pipelines_per_gpu: 2",
      6,
    );
    h = await execute(plan, { baseDir: join(import.meta.dirname, "../../../fixtures/run/warm") });
    expect(h.summary).toMatchObject({ ok: 12, failed: 0 });
    expect(count(h.events, "gpu.model.load_start")).toBe(1);
    expect(h.lock.peak.get("cuda:0")).toBeLessThanOrEqual(2);
    expect(h.lock.held.get("cuda:0")).toBe(0);
  });
});
