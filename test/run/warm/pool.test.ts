import { afterEach, describe, expect, it, vi } from "vitest";
import { type ModelEventName, type WarmTaskRequest, WorkerPool } from "../../../src/run/warm/worker-pool.js";
import { execute, type Harness } from "../helpers/harness.js";
import { count, WORKER, warmPlan, workerStep } from "./helpers.js";

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

const GiB = 1024 ** 3;

function pool(maxWarm: number) {
  const events: { name: ModelEventName; fields: Record<string, unknown> }[] = [];
  const p = new WorkerPool({
    maxWarm,
    stopGraceMs: 200,
    logDir: null,
    emit: (event) => {
      events.push({ name: event.event, fields: { ...event } });
    },
  });
  return {
    p,
    events,
    evictions: () =>
      events
        .filter((e) => e.name === "gpu.model.cache_evict")
        .map((e) => `${e.fields.model_key} ${e.fields.reason}`),
  };
}

const request = (key: string, vram: number, budget: number | null = null): WarmTaskRequest => ({
  key,
  device: "cuda:0",
  uuids: [],
  allocatedDevices: ["cuda:0"],
  argv: ["node", WORKER],
  cwd: process.cwd(),
  env: { PATH: process.env.PATH ?? "" },
  ownEnv: {},
  leases: [],
  readyTimeoutMs: 10_000,
  keepWarm: { ttlMs: 60_000 },
  exclusive: false,
  vramBytes: vram,
  budgetBytes: budget,
  task: { id: `t-${key}`, pipeline: "p", step: "s", args: { matrix: {}, argv: [] } },
  timeoutMs: null,
  onLine: () => undefined,
});

describe("worker pool", () => {
  it("never keeps more warm VRAM than the budget, even with places left", async () => {
    const { p, evictions } = pool(3);
    await p.run(request("a", 30 * GiB, 60 * GiB));
    await p.run(request("b", 20 * GiB, 60 * GiB));
    expect(evictions()).toEqual([]);
    // 30 + 20 + 20 > 60: the least recently used (a) goes.
    await p.run(request("c", 20 * GiB, 60 * GiB));
    expect(evictions()).toEqual(["a replacement"]);
    expect(
      p
        .list()
        .map((w) => w.key)
        .sort(),
    ).toEqual(["b", "c"]);
    await p.shutdown();
    expect(evictions()).toEqual(["a replacement", "b shutdown", "c shutdown"]);
  });

  it("a worker read after its first task (onKept) and evicted meanwhile by another key's load is not kept", async () => {
    const { p, events, evictions } = pool(1);
    let release = () => {};
    const reading = new Promise<void>((resolve) => {
      release = resolve;
    });
    let kept = 0;
    const first = p.run({
      ...request("a", GiB),
      onKept: () => {
        kept++;
        return reading;
      },
    });
    // While a's last reading is out, b loads on the same GPU: one warm place, so idle a goes.
    await new Promise((r) => setTimeout(r, 50));
    for (let i = 0; i < 200 && kept === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(kept).toBe(1);
    const second = p.run(request("b", GiB));
    for (let i = 0; i < 200 && evictions().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    release();
    expect((await first).status).toBe("ok");
    expect((await second).status).toBe("ok");
    expect(evictions()).toEqual(["a replacement"]);
    expect(p.list().map((w) => w.key)).toEqual(["b"]);
    // Not stored after its eviction (no cache_store for a gone worker).
    const ofA = events.filter((e) => e.fields.model_key === "a").map((e) => e.name);
    expect(ofA).not.toContain("gpu.model.cache_store");
    // A reused worker's task does not read again.
    await p.run({ ...request("b", GiB), onKept: async () => void kept++ });
    expect(kept).toBe(1);
    await p.shutdown();
    expect(evictions()).toEqual(["a replacement", "b shutdown"]);
  });

  it("evicts on request (manual), and the next task loads again", async () => {
    const { p, events, evictions } = pool(1);
    expect((await p.run(request("a", GiB))).reused).toBe(false);
    expect((await p.run(request("a", GiB))).reused).toBe(true);
    expect(await p.evictKey("a", "cuda:0")).toBe(true);
    expect(await p.evictKey("a", "cuda:0")).toBe(false);
    expect((await p.run(request("a", GiB))).reused).toBe(false);
    await p.shutdown();
    expect(evictions()).toEqual(["a manual", "a shutdown"]);
    expect(events.filter((e) => e.name === "gpu.model.load_start")).toHaveLength(2);
    expect(events.filter((e) => e.name === "gpu.model.cleanup")).toHaveLength(2);
  });
});

describe("warm workers: more failures", () => {
  it("a worker command that cannot start fails the step with its error", async () => {
    const plan = warmPlan(workerStep("seg").replace(/run: \[.*\]\n/, 'run: ["/nonexistent/worker"]\n'));
    h = await execute(plan);
    expect(h.summary.failures[0]).toMatchObject({ status: "error" });
    expect(h.summary.failures[0]!.hint).toContain("ENOENT");
  });

  it("a task past the step's timeout stops the worker (error eviction) and times the step out", async () => {
    h = await execute(warmPlan(workerStep("seg", { args: ["--sleep", "5000"], extra: "timeout: 300ms" })));
    expect(h.summary.failures[0]).toMatchObject({ status: "timeout" });
    expect(count(h.events, "gpu.model.cache_evict", "error")).toBe(1);
  });
});

describe("worker pool under a wall clock that steps (NTP, date -s)", () => {
  const HOUR = 3_600_000;
  const stepClock = (byMs: number) => {
    const real = Date.now.bind(Date);
    vi.spyOn(Date, "now").mockImplementation(() => real() + byMs);
  };
  afterEach(() => {
    vi.restoreAllMocks();
  });

  it("an idle model is still evicted at its TTL after the clock stepped back an hour", async () => {
    const { p, evictions } = pool(1);
    await p.run({ ...request("a", GiB), keepWarm: { ttlMs: 300 } });
    stepClock(-HOUR);
    for (let i = 0; i < 80 && evictions().length === 0; i++) await new Promise((r) => setTimeout(r, 25));
    expect(evictions()).toEqual(["a expired"]);
    await p.shutdown();
  });

  it("a warm model is reused within its TTL after the clock stepped forward an hour", async () => {
    const { p, evictions } = pool(1);
    expect((await p.run(request("a", GiB))).reused).toBe(false);
    stepClock(HOUR);
    expect((await p.run(request("a", GiB))).reused).toBe(true);
    await p.shutdown();
    expect(evictions()).toEqual(["a shutdown"]);
  });
});
