import { afterEach, describe, expect, it } from "vitest";
import { execute, type Harness, planFrom } from "../helpers/harness.js";
import { count, oneGpu, WORKER, workerRecords } from "./helpers.js";

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

/** Two pipelines whose worker steps share a key and argv, the second with `extra` (env, cwd). */
const collidingPlan = (first: string, second: string) =>
  planFrom(
    `
version: 1
name: collide
registry: { max_pipelines_per_gpu: 1, max_parallel_pipelines: 1 }
pipelines:
  - name: small
    steps:
      - id: seg
        memory: torch
        vram: 4GiB
        worker: { run: ["node", ${JSON.stringify(WORKER)}], key: model }
        ${first}
  - name: large
    steps:
      - id: seg
        memory: torch
        vram: 4GiB
        worker: { run: ["node", ${JSON.stringify(WORKER)}], key: model }
        ${second}
`,
    oneGpu(),
  );

describe("warm workers: one key, two launches", () => {
  it("a step whose env differs is not served by the worker another step's env started", async () => {
    h = await execute(collidingPlan("env: { MODEL: small.pt }", "env: { MODEL: large.pt }"));
    expect(h.summary).toMatchObject({ ok: 2, failed: 0 });
    const tasks = workerRecords(h.dir).filter((r) => r.what === "task");
    expect(tasks.map((t) => t.pipeline)).toEqual(["small", "large"]);
    // Before: one process (MODEL=small.pt) answered both tasks.
    expect(new Set(tasks.map((t) => t.pid)).size).toBe(2);
    expect(count(h.events, "gpu.model.cache_evict", "replacement")).toBe(1);
  });

  it("a step whose cwd differs gets a worker started there", async () => {
    // The run's base folder is fixtures/run/: warm is a folder there.
    h = await execute(collidingPlan("", "cwd: warm"));
    expect(h.summary).toMatchObject({ ok: 2, failed: 0 });
    const tasks = workerRecords(h.dir).filter((r) => r.what === "task");
    expect(new Set(tasks.map((t) => t.pid)).size).toBe(2);
  });

  it("the same env and cwd keep one warm worker", async () => {
    h = await execute(collidingPlan("env: { MODEL: m.pt }", "env: { MODEL: m.pt }"));
    expect(h.summary).toMatchObject({ ok: 2, failed: 0 });
    const tasks = workerRecords(h.dir).filter((r) => r.what === "task");
    expect(new Set(tasks.map((t) => t.pid)).size).toBe(1);
    expect(count(h.events, "gpu.model.cache_reuse")).toBe(1);
  });
});
