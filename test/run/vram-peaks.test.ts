// Peak VRAM per attempt (src/run/executor/vram-watch.ts): per-process readings matched to the
// attempt's process group, the fullest GPU's sum kept; and end to end on fake NVML GPUs, where
// each step lists its own process in the driver's answer and its gpu.step.end says its peak, all
// read by the run's one sampler process.
import { appendFileSync, copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { VramWatch } from "../../src/run/executor/vram-watch.js";
import type { GpuMemory } from "../../src/run/record/memory-snapshot.js";
import { fakeEnv, fakeLib, fakeLibsBuilt } from "../detect/fake-libs.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";

const GiB = 1024 ** 3;
const gpu = (uuid: string, processes: [number, number | null][]): GpuMemory => ({
  gpu: uuid,
  uuid,
  totalBytes: 80 * GiB,
  usedBytes: null,
  freeBytes: null,
  processes: processes.map(([pid, usedBytes]) => ({ pid, usedBytes })),
});

describe("VramWatch", () => {
  it("sums an attempt's processes per GPU (its process group), keeps the highest reading, ignores others", async () => {
    let readings: GpuMemory[] = [];
    // pid → process group: 100 and 101 are step A's (group 100), 200 step B's, 300 someone else's.
    const groups: Record<number, number> = { 100: 100, 101: 100, 200: 200, 300: 300 };
    const watch = new VramWatch(
      async () => readings,
      60_000,
      async (pid) => groups[pid] ?? null,
    );
    watch.start("A", 100, ["GPU-a", "GPU-b"]);
    watch.start("B", 200, ["GPU-a"]);
    readings = [
      gpu("GPU-a", [
        [100, 2 * GiB],
        [101, 1 * GiB],
        [200, 5 * GiB],
        [300, 9 * GiB],
      ]),
      gpu("GPU-b", [[100, 4 * GiB]]),
    ];
    await watch.sample();
    readings = [
      gpu("GPU-a", [
        [100, 6 * GiB],
        [200, 1 * GiB],
        [999, 1 * GiB],
      ]),
      gpu("GPU-b", [[101, null]]),
    ];
    await watch.sample();
    // A: max(3 on a, 4 on b) then 6 on a → 6. B: 5 then 1 → 5. Process 200 on GPU-b would not count for B.
    expect(watch.stop("A")).toBe(6 * GiB);
    expect(watch.stop("B")).toBe(5 * GiB);
    expect(watch.stop("never")).toBeNull();
  });

  it("a warm worker's later tasks, shorter than any reading, start from what its group last held", async () => {
    let readings: GpuMemory[] = [];
    const watch = new VramWatch(
      async () => readings,
      60_000,
      async (pid) => pid,
    );
    // The worker's first task (its load included) is read; the next ones end before any reading.
    watch.start("task 1", 500, ["GPU-a"], "new");
    readings = [gpu("GPU-a", [[500, 4 * GiB]])];
    await watch.sample();
    expect(watch.stop("task 1")).toBe(4 * GiB);
    watch.start("task 2", 500, ["GPU-a"], "reused");
    expect(watch.stop("task 2")).toBe(4 * GiB);
    // A reading during a task still raises its peak, and is what the next task starts from.
    watch.start("task 3", 500, ["GPU-a"], "reused");
    readings = [gpu("GPU-a", [[500, 5 * GiB]])];
    await watch.sample();
    expect(watch.stop("task 3")).toBe(5 * GiB);
    watch.start("task 4", 500, ["GPU-a"], "reused");
    expect(watch.stop("task 4")).toBe(5 * GiB);
    // A new worker that happens to get the old one's pid starts from nothing.
    watch.start("other worker", 500, ["GPU-a"], "new");
    expect(watch.stop("other worker")).toBeNull();
    // A plain step's group is never met again: nothing of it is kept.
    watch.start("plain", 600, ["GPU-a"]);
    readings = [gpu("GPU-a", [[600, 2 * GiB]])];
    await watch.sample();
    expect(watch.stop("plain")).toBe(2 * GiB);
    watch.start("after", 600, ["GPU-a"], "reused");
    expect(watch.stop("after")).toBeNull();
  });

  it("a fresh reading when a warm worker's first task answers: its model, landed after the last reading, is seen", async () => {
    let readings: GpuMemory[] = [gpu("GPU-a", [])];
    let fresh = 0;
    const watch = new VramWatch(
      async () => readings,
      60_000,
      async (pid) => pid,
      async () => {
        fresh++;
        return readings;
      },
    );
    watch.start("load", 700, ["GPU-a"], "new");
    await watch.sample();
    // The model lands on the GPU as loading ends, after the last scheduled reading.
    readings = [gpu("GPU-a", [[700, 3 * GiB]])];
    // The next task is sent to the worker already: both are credited.
    watch.start("next", 700, ["GPU-a"], "reused");
    await watch.readNow();
    expect(fresh).toBe(1);
    expect(watch.stop("load")).toBe(3 * GiB);
    expect(watch.stop("next")).toBe(3 * GiB);
    watch.start("quick", 700, ["GPU-a"], "reused");
    expect(watch.stop("quick")).toBe(3 * GiB);
    // Nothing watched: no reading.
    await watch.readNow();
    expect(fresh).toBe(1);
  });

  it("an interrupt does not wait for a reading a hung driver never answers", async () => {
    const watch = new VramWatch(
      async () => null,
      60_000,
      async (pid) => pid,
      () => new Promise<GpuMemory[] | null>(() => {}),
    );
    watch.start("load", 700, ["GPU-a"], "new");
    const stop = new AbortController();
    setTimeout(() => stop.abort(), 50);
    const started = performance.now();
    await watch.readNow(stop.signal);
    expect(performance.now() - started).toBeLessThan(1000);
    await watch.readNow(stop.signal);
    watch.close();
  });

  it("one chain of readings, even when the watch stops and starts while a reading is out", async () => {
    let reads = 0;
    const watch = new VramWatch(async () => {
      reads++;
      await new Promise((r) => setTimeout(r, 60));
      return null;
    }, 100);
    watch.start("A", 1, ["GPU-a"]);
    // The first reading is out from 50 ms to 110 ms; stop and start again while it is.
    await new Promise((r) => setTimeout(r, 80));
    watch.stop("A");
    watch.start("B", 2, ["GPU-a"]);
    await new Promise((r) => setTimeout(r, 1000));
    watch.close();
    // One chain: a reading every ~160 ms (60 ms out, 100 ms apart), ~7 in a second; two chains read twice that.
    expect(reads).toBeGreaterThan(1);
    expect(reads).toBeLessThan(10);
  });

  it("has no peak for an attempt no reading saw, and reads nothing once nothing is watched", async () => {
    let reads = 0;
    const watch = new VramWatch(async () => {
      reads++;
      return null;
    }, 20);
    watch.start("A", 1, ["GPU-a"]);
    await new Promise((r) => setTimeout(r, 120));
    expect(watch.stop("A")).toBeNull();
    const after = reads;
    expect(after).toBeGreaterThan(0);
    await new Promise((r) => setTimeout(r, 100));
    expect(reads).toBe(after);
  });
});

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** `gpuplan run p.yaml --ui json` in `cwd`, on the fake NVML GPUs of its two-gpus.scenario: the events. */
// biome-ignore lint/suspicious/noExplicitAny: events as JSON.parse gives them; each test reads its own kinds' fields
function runOnTwoFakeGpus(cwd: string): any[] {
  const env = {
    ...fakeEnv(
      "busy.scenario",
      { nvml: fakeLib("nvml") },
      { GPUPLAN_FAKE_SCENARIO: join(cwd, "two-gpus.scenario") },
    ),
    GPUPLAN_LOCK_DIR: join(cwd, "locks"),
    CI: "1",
  };
  const r = gpuplan(["run", "p.yaml", "--ui", "json"], { cwd, env });
  expect(r.exitCode, r.stderr).toBe(0);
  return r.stdout
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
}

describe.skipIf(!fakeLibsBuilt)("peak VRAM on fake NVML GPUs (CLI)", () => {
  it("each GPU attempt's gpu.step.end carries the most its processes held; CPU steps carry none", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const cwd = t.dir;
    for (const f of ["step.mjs", "two-gpus.scenario"])
      copyFileSync(join(ROOT, "fixtures/report", f), join(cwd, f));
    mkdirSync(join(cwd, "locks"));
    appendFileSync(join(cwd, "two-gpus.scenario"), `\nnvml.init_log = ${join(cwd, "init.log")}\n`);
    writeFileSync(
      join(cwd, "p.yaml"),
      `version: 1
name: vram
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 4 }
pipelines:
  - name: a
    steps:
      - { id: prep, run: [node, step.mjs, sleep, prep, "50"], memory: numpy }
      - { id: small, run: [node, step.mjs, vram, small, "1500", "${3 * GiB}"], memory: torch, vram: 4GiB, needs: [prep] }
      - { id: large, run: [node, step.mjs, vram, large, "1500", "${7 * GiB}"], memory: torch, vram: 8GiB, needs: [small] }
  - name: b
    steps:
      - { id: beside, run: [node, step.mjs, vram, beside, "1500", "${5 * GiB}"], memory: torch, vram: 6GiB }
  - name: c
    steps:
      - { id: greedy, run: [node, step.mjs, vram, greedy, "1500", "${3 * GiB}"], memory: torch, vram: 2GiB }
`,
    );
    const events = runOnTwoFakeGpus(cwd);
    const ends = events.filter((e) => e.event === "gpu.step.end");
    const peak = Object.fromEntries(ends.map((e) => [`${e.pipeline}/${e.step}`, e.peakVramBytes ?? null]));
    expect(peak).toEqual({
      "a/prep": null,
      "a/small": 3 * GiB,
      "a/large": 7 * GiB,
      "b/beside": 5 * GiB,
      "c/greedy": 3 * GiB,
    });
    // Only the step that held more than its `vram` is reported, as an event and in the summary.
    const over = {
      pipeline: "c",
      step: "greedy",
      device: expect.stringMatching(/^cuda:/),
      attempt: 1,
      peakVramBytes: 3 * GiB,
      reservationBytes: 2 * GiB,
    };
    expect(events.filter((e) => e.event === "gpu.step.over_reservation")).toEqual([
      expect.objectContaining({ event: "gpu.step.over_reservation", ...over }),
    ]);
    expect(events.at(-1)).toMatchObject({ event: "run.summary", overReservations: [over] });
    // The fake driver really listed them (the scenario the steps wrote).
    expect(readFileSync(join(cwd, "two-gpus.scenario"), "utf8")).toMatch(/processes = .*:3221225472/);
    // Readings come from one long-lived process, not a Node start each, and it is the one that
    // checked the machine for the compile (pre-started by bin/gpuplan.js, then serving).
    const inits = readFileSync(join(cwd, "init.log"), "utf8").trim().split("\n");
    expect(inits.length).toBeGreaterThan(4);
    expect(new Set(inits).size).toBe(1);
  }, 60_000);

  it.each([
    ["one slot per GPU", "max_pipelines_per_gpu: 1"],
    // Tasks queue on each worker: the next one is sent as soon as the first has answered.
    ["three pipelines per GPU at once", "max_pipelines_per_gpu: 3, max_parallel_pipelines: 6"],
  ])(
    "a worker step's peak is its worker's: on the task that loaded it, and on each quick task after (%s)",
    (_, registry) => {
      const t = tempDir();
      cleanups.push(t.cleanup);
      const cwd = t.dir;
      copyFileSync(join(ROOT, "fixtures/report/two-gpus.scenario"), join(cwd, "two-gpus.scenario"));
      mkdirSync(join(cwd, "locks"));
      // The worker takes 1.5 s to load and lists itself in the fake driver's answer only at its end
      // (as PyTorch's context did on an H100), after the last reading of the load; then it answers
      // each task in 100 ms, far quicker than a reading's interval.
      writeFileSync(
        join(cwd, "worker.mjs"),
        `import { appendFileSync, createReadStream } from "node:fs";
import { createInterface } from "node:readline";
const index = process.env.GPUPLAN_DEVICE.split(":")[1];
await new Promise((r) => setTimeout(r, 1450));
appendFileSync(process.env.GPUPLAN_FAKE_SCENARIO, \`\\nnvml.\${index}.processes = \${process.pid}:${3 * GiB}\\n\`);
await new Promise((r) => setTimeout(r, 50));
process.stdout.write(JSON.stringify({ ready: true }) + "\\n");
for await (const line of createInterface({ input: process.stdin })) {
  const task = JSON.parse(line);
  await new Promise((r) => setTimeout(r, 100));
  process.stdout.write(JSON.stringify({ id: task.id, ok: true, result: null }) + "\\n");
}
`,
      );
      writeFileSync(
        join(cwd, "p.yaml"),
        `version: 1
name: worker-vram
registry: { ${registry} }
pipelines:
  - name: plate-{n}
    matrix: { n: [1, 2, 3, 4, 5, 6] }
    steps:
      - id: infer
        memory: torch
        vram: 2GiB
        worker: { run: [node, worker.mjs], key: model }
        keep_warm: { ttl: 5m }
`,
      );
      const events = runOnTwoFakeGpus(cwd);
      // One worker per GPU (the plates are spread over both), each loaded once.
      expect(events.filter((e) => e.event === "gpu.model.load_start")).toHaveLength(2);
      expect(events.filter((e) => e.event === "gpu.model.cache_reuse")).toHaveLength(4);
      const ends = events.filter((e) => e.event === "gpu.step.end");
      expect(ends.map((e) => e.peakVramBytes ?? null)).toEqual(Array(6).fill(3 * GiB));
      // Each held more than the step's `vram`, and says so: compile --history learns from these.
      expect(events.filter((e) => e.event === "gpu.step.over_reservation")).toHaveLength(6);
    },
    60_000,
  );
});
