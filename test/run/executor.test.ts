// The executor with the real slot lock (recorded; a second lock instance where a test decides
// who else holds a GPU): ordering, bounds, slots, exclusivity, failures, timeouts, OOM retries and the CPU
// fallback, journal and events. Steps are small node scripts from fixtures/run.
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { InternalError } from "../../src/problems/errors.js";
import { createSlotLock } from "../../src/run/lock/index.js";
import { noGpuLock } from "../../src/run/lock/no-gpu-lock.js";
import { GpuBusyError } from "../../src/run/lock/types.js";
import type { RunEvent } from "../../src/run/record/events.js";
import { readJournal, stepKey } from "../../src/run/record/journal.js";
import { execute, type Harness, maxConcurrent, oneGpu, planFrom, records } from "./helpers/harness.js";
import { createRecordingLock } from "./helpers/recording-lock.js";

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

const gpuStep = (id: string, extra = "") => `
      - id: ${id}
        run: [node, record.mjs, "{p}-${id}", "60"]
        memory: torch
        vram: 4GiB${extra}`;

describe("executor", () => {
  it("runs steps in `needs` order, one at a time per pipeline, and journals each before reporting it", async () => {
    const plan = planFrom(`
version: 1
name: order
pipelines:
  - name: p-{p}
    matrix: { p: [x] }
    steps:
      - id: a
        run: [node, record.mjs, "{p}-a", "10"]
        memory: numpy
      - id: b
        run: [node, record.mjs, "{p}-b", "10"]
        memory: numpy
        needs: [a]
      - id: c
        run: [node, record.mjs, "{p}-c", "10"]
        memory: numpy
        needs: [b]
`);
    // Another engine may list steps in any order: the executor follows `needs`, not the list.
    plan.pipelines[0]!.steps.reverse();
    h = await execute(plan);
    const enters = records(h.dir).filter((r) => r.what === "enter");
    expect(enters.map((r) => r.name)).toEqual(["x-a", "x-b", "x-c"]);
    expect(maxConcurrent(records(h.dir))).toBe(1);
    expect(h.summary).toMatchObject({ ok: 3, failed: 0, skipped: 0, interrupted: false });
    const journal = await readJournal(h.runDir);
    expect([...journal.completed].sort()).toEqual(["a", "b", "c"].map((s) => stepKey("p-x", s)));
    // CPU steps see no GPU.
    expect(enters.every((r) => r.cuda === "" && r.device === "cpu")).toBe(true);
    // A step that printed nothing and succeeded leaves no (empty) log files.
    expect(readdirSync(join(h.runDir, "logs"))).toEqual([]);
  });

  it("bounds concurrent pipelines by max_parallel_pipelines", async () => {
    // meet.mjs steps wait for each other in pairs: with two allowed at once, two are seen
    // together however slowly a busy machine starts them, and never a third.
    const plan = planFrom(`
version: 1
name: workers
registry: { max_parallel_pipelines: 2 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2, 3, 4] }
    steps:
      - id: s
        run: [node, meet.mjs, "{p}"]
        memory: numpy
`);
    h = await execute(plan);
    expect(h.summary.ok).toBe(4);
    expect(maxConcurrent(records(h.dir))).toBe(2);
  }, 60_000);

  it("a pipeline's worker goes to the next pipeline when its last process ends, before its journal flush; steps of one pipeline still wait for it", async () => {
    const plan = planFrom(`
version: 1
name: flush
registry: { max_parallel_pipelines: 1 }
pipelines:
  - name: one
    steps:
      - { id: a, run: ["true"], memory: numpy }
      - { id: b, run: ["true"], memory: numpy, needs: [a] }
  - name: two
    steps:
      - { id: c, run: ["true"], memory: numpy }
`);
    // A slow disk: every step entry takes 300 ms to be flushed.
    const events: string[] = [];
    const slowJournal = {
      async append(entry: { type: string; pipeline?: string; step?: string }) {
        if (entry.type !== "step") return;
        await new Promise((resolve) => setTimeout(resolve, 300));
        events.push(`flushed ${entry.pipeline}/${entry.step}`);
      },
      async close() {},
    };
    h = await execute(plan, {
      journal: slowJournal,
      emit: (e) => {
        if (e.event === "gpu.step.start" || e.event === "gpu.step.end")
          events.push(`${e.event} ${e.pipeline}/${e.step}`);
      },
    });
    expect(h.summary.ok).toBe(3);
    // b waits for a's flush and report; two's c starts while b's entry is still being flushed;
    // every step is reported only after its own flush.
    expect(events).toEqual([
      "gpu.step.start one/a",
      "flushed one/a",
      "gpu.step.end one/a",
      "gpu.step.start one/b",
      "gpu.step.start two/c",
      "flushed one/b",
      "gpu.step.end one/b",
      "flushed two/c",
      "gpu.step.end two/c",
    ]);
  });

  it("no more of a run's pipelines ask a GPU's lock at once than it has slots; the others wait in the run, still announced", async () => {
    const plan = planFrom(
      `
version: 1
name: turns
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 16 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12] }
    steps:${gpuStep("a")}
`,
      oneGpu(),
    );
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 12, failed: 0 });
    const gpu = plan.registry[0]!.gpu;
    // Each asking pipeline opens the GPU's lock file and is polled at every release: 12 asked at once before.
    expect(h.lock.peakAsking.get(gpu)).toBe(2);
    expect(h.lock.peak.get(gpu)).toBe(2);
    // Waiting in the run is still a wait for a slot of the GPU, said as one.
    expect(new Set(h.names("gpu.lock.wait")).size).toBeGreaterThanOrEqual(10);
    expect(h.lock.calls.filter((c) => c.call === "acquire")).toHaveLength(12);
  });

  it("--lock-timeout 0: the run's own pipelines queue behind each other in its turns, as without it; the timeout is for others' slots", async () => {
    const plan = planFrom(
      `
version: 1
name: turns-timeout
registry: { max_pipelines_per_gpu: 1, max_parallel_pipelines: 4 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2, 3] }
    steps:${gpuStep("a")}
`,
      oneGpu(),
    );
    // A wait behind the run's own pipelines always ends (slot holders run): counted against the
    // timeout, it failed every pipeline beyond the GPU's slots (all of them past the first here).
    h = await execute(plan, { lockTimeoutMs: 0 });
    expect(h.summary).toMatchObject({ ok: 3, failed: 0 });
    expect(maxConcurrent(records(h.dir))).toBe(1);
    expect(h.lock.peakAsking.get(plan.registry[0]!.gpu)).toBe(1);
  });

  it("a GPU pipeline holds one slot of its GPU across consecutive GPU steps; never more holders than slots", async () => {
    const plan = planFrom(`
version: 1
name: slots
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 16 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2, 3, 4, 5, 6] }
    steps:${gpuStep("a")}${gpuStep("b")}
`);
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 12, failed: 0 });
    for (const gpu of new Set(plan.pipelines.map((p) => p.gpu!))) {
      expect(h.lock.peak.get(gpu)).toBeLessThanOrEqual(2);
      expect(maxConcurrent(records(h.dir), (r) => r.device === gpu)).toBeLessThanOrEqual(2);
    }
    // One acquire and one release per pipeline, around its GPU steps in a row: taken before the first
    // starts, given back once the last one's process has ended (before its journal flush and
    // gpu.step.end, as the permit is: the next pipeline waits for the slot, not for the disk).
    for (const p of plan.pipelines) {
      const calls = h.lock.calls.filter((c) => c.pipeline === p.name).map((c) => c.call);
      expect(calls).toEqual(["acquire", "acquired", "release"]);
      const events = h.events.filter((e) => e.pipeline === p.name).map((e) => e.event);
      expect(events.indexOf("gpu.lock.acquired")).toBeLessThan(events.indexOf("gpu.step.start"));
      expect(events.lastIndexOf("gpu.lock.released")).toBeGreaterThan(events.lastIndexOf("gpu.step.start"));
    }
    // GPU steps see exactly their GPU, by UUID.
    const uuidOf = new Map(plan.registry.map((r) => [r.gpu, r.uuid]));
    for (const r of records(h.dir)) expect(r.cuda).toBe(uuidOf.get(r.device!));
  });

  it("an exclusive step upgrades before it runs, downgrades after, and runs alone on its GPU", async () => {
    // Force all three onto one GPU by compiling against a one-GPU machine.
    const one = planFrom(
      `
version: 1
name: exclusive
registry: { max_pipelines_per_gpu: 3, max_parallel_pipelines: 16 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2, 3] }
    steps:${gpuStep("prep")}${gpuStep("heavy", "\n        exclusive: true")}${gpuStep("post")}
`,
      oneGpu(),
    );
    expect(one.pipelines.length).toBe(3);
    h = await execute(one);
    expect(h.summary).toMatchObject({ ok: 9, failed: 0 });
    const all = records(h.dir);
    // While a "heavy" step runs, nothing else runs.
    const heavy = all.filter((r) => r.name.endsWith("-heavy"));
    for (const enter of heavy.filter((r) => r.what === "enter")) {
      const exit = heavy.find((r) => r.what === "exit" && r.name === enter.name)!;
      const overlapping = all.filter((r) => r.name !== enter.name && r.t > enter.t && r.t < exit.t);
      expect(overlapping).toEqual([]);
    }
    for (const p of one.pipelines) {
      const calls = h.lock.calls.filter((c) => c.pipeline === p.name);
      expect(calls.filter((c) => !c.gpu.includes("intent")).map((c) => `${c.call}:${c.step ?? ""}`)).toEqual([
        "acquire:",
        "acquired:",
        "upgrade:heavy",
        "upgraded:heavy",
        "downgrade:heavy",
        "release:post",
      ]);
    }
    expect(h.lock.peak.get("cuda:0")).toBeLessThanOrEqual(3);
  });

  it("fewer workers than slots with an exclusive step does not deadlock: a slot without a worker goes back", async () => {
    // One worker, two slots on one GPU. Pipeline 1 holds the worker and a slot and upgrades for its
    // exclusive step; pipeline 2 gets the other slot but no worker, so it gives the slot back and
    // waits for the worker holding nothing (#12 item 13). Were it to keep the slot while it waits,
    // each would wait for the other forever.
    const one = planFrom(
      `
version: 1
name: no-deadlock
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 1 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2] }
    steps:${gpuStep("prep")}${gpuStep("heavy", "\n        exclusive: true")}
`,
      oneGpu(),
    );
    expect(one.settings.maxParallelPipelines).toBe(1);
    expect(one.registry[0]!.maxPipelines).toBe(2);
    h = await execute(one, { lockTimeoutMs: 20_000 });
    expect(h.summary).toMatchObject({ ok: 4, failed: 0 });
    // Still never more than one step at a time (one worker), and the heavy steps ran alone.
    expect(maxConcurrent(records(h.dir))).toBe(1);
  });

  it("a pipeline waiting for a worker holds no slot: a GPU pipeline never holds one through another's CPU step", async () => {
    // One worker: the CPU pipeline takes it first (the GPU one is still opening the lock). The GPU
    // pipeline gets its slot but no worker, so it gives the slot back while it waits (#12 item 13).
    const plan = planFrom(`
version: 1
name: one-worker
registry: { max_pipelines_per_gpu: 1, max_parallel_pipelines: 1 }
pipelines:
  - name: host
    steps:
      - { id: c, run: [node, record.mjs, host-c, "500"], memory: numpy }
  - name: gpu
    steps:
      - { id: g, run: [node, record.mjs, gpu-g, "50"], memory: torch, vram: 4GiB }
`);
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 2, failed: 0 });
    const at = (e: RunEvent) => Date.parse(e.ts);
    const of = (pipeline: string, event: string) =>
      h!.events.filter((e) => e.pipeline === pipeline && e.event === event).map(at);
    const [cpuStart] = of("host", "gpu.step.start");
    // The CPU process's end, not its gpu.step.end event: the permit goes back when the process
    // ends, and the event follows the step's journal flush (an fsync: 56 ms once on a loaded CI
    // runner, which read as the GPU pipeline's final hold overlapping the CPU step).
    const cpuStepEnd = h.events.find((e) => e.pipeline === "host" && e.event === "gpu.step.end");
    if (cpuStepEnd?.event !== "gpu.step.end") throw new Error("the CPU step never ended");
    const cpuEnd = cpuStart! + cpuStepEnd.durationMs;
    const acquired = of("gpu", "gpu.lock.acquired");
    const released = of("gpu", "gpu.lock.released");
    expect(acquired.length).toBeGreaterThan(0);
    expect(released).toHaveLength(acquired.length);
    // No hold of the GPU pipeline's slot overlaps the 500 ms CPU step by more than a moment (a slot
    // taken while the worker is busy goes straight back).
    for (const [i, from] of acquired.entries()) {
      const overlap = Math.min(released[i]!, cpuEnd!) - Math.max(from, cpuStart!);
      expect(overlap, `hold ${from}..${released[i]} during ${cpuStart}..${cpuEnd}`).toBeLessThan(50);
    }
  });

  it("a failed step fails its pipeline: later steps are skipped, other pipelines go on; the failure says why", async () => {
    const plan = planFrom(`
version: 1
name: failing
pipelines:
  - name: bad
    steps:
      - id: one
        run: [node, fail.mjs, "3"]
        memory: numpy
      - id: two
        run: [node, record.mjs, bad-two, "10"]
        memory: numpy
  - name: good
    steps:
      - id: one
        run: [node, record.mjs, good-one, "10"]
        memory: numpy
`);
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 1, failed: 1, skipped: 1 });
    expect(records(h.dir).map((r) => r.name)).not.toContain("bad-two");
    expect(h.names("gpu.step.skip")).toEqual(["bad/two"]);
    const [failure] = h.summary.failures;
    expect(failure).toMatchObject({
      pipeline: "bad",
      step: "one",
      device: "cpu",
      status: "error",
      exitCode: 3,
    });
    expect(failure!.stderrTail).toEqual(Array.from({ length: 10 }, (_, i) => `stderr line ${i + 6}`));
    expect(failure!.logPath).toBe(join(h.runDir, "logs", "bad@one.out.log"));
    expect(readFileSync(failure!.logPath, "utf8")).toContain("some stdout");
    // stderr has a file of its own, beside stdout's; the tail above came from it.
    expect(failure!.stderrPath).toBe(join(h.runDir, "logs", "bad@one.err.log"));
    expect(readFileSync(failure!.stderrPath!, "utf8")).toContain("stderr line 15\n");
    expect(readFileSync(failure!.logPath, "utf8")).not.toContain("stderr line");
    expect(h.output.filter((o) => o.pipeline === "bad" && o.stream === "stderr")).toHaveLength(15);
  });

  it("a timeout kills the step's whole process group, grandchildren included, after the grace period", async () => {
    // The step and its grandchild ignore SIGTERM (a shell's `trap ''` is inherited), so only
    // the SIGKILL after the grace period ends them. The pid file is written after the trap: when
    // it exists, the step was stubborn before its timeout came. A machine too busy to start a
    // shell within the timeout tries again with a longer one; what is asserted does not change.
    for (const timeout of ["500ms", "3s", "20s"]) {
      const dir = mkdtempSync(join(tmpdir(), "gpuplan-pid-"));
      const pidFile = join(dir, "pid");
      const plan = planFrom(`
version: 1
name: timeout
pipelines:
  - name: slow
    steps:
      - id: hang
        run: [/bin/sh, -c, "trap '' TERM; sleep 1000 & echo $! > ${pidFile}; wait"]
        memory: numpy
        timeout: ${timeout}
`);
      h?.cleanup();
      h = await execute(plan, { killGraceMs: 300 });
      const grandchild = existsSync(pidFile) ? Number(readFileSync(pidFile, "utf8")) : null;
      rmSync(dir, { recursive: true, force: true });
      if (grandchild === null) continue;
      expect(isAlive(grandchild)).toBe(false);
      expect(h.summary.failures[0]).toMatchObject({ status: "timeout", signal: "SIGKILL" });
      expect(h.names("gpu.step.timeout")).toEqual(["slow/hang"]);
      return;
    }
    throw new Error("the step never got to its trap before its timeout, even with 20 s");
  }, 60_000);

  it("processes a step leaves in its process group are ended when it exits: SIGTERM, then SIGKILL after the grace", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-pid-"));
    try {
      const plan = planFrom(`
version: 1
name: leftovers
registry: { platform_priority: [cpu], max_parallel_pipelines: 2 }
pipelines:
  - name: polite
    steps:
      - { id: leave, run: [node, leave-behind.mjs, "${join(dir, "polite")}"], memory: numpy }
  - name: stubborn
    steps:
      - { id: leave, run: [node, leave-behind.mjs, "${join(dir, "stubborn")}", --stubborn], memory: numpy }
      - { id: next, run: [node, record.mjs, next, "10"], memory: numpy, needs: [leave] }
`);
      h = await execute(plan, { killGraceMs: 300 });
      expect(h.summary).toMatchObject({ ok: 3, failed: 0 });
      for (const name of ["polite", "stubborn"]) {
        const pid = Number(readFileSync(join(dir, name), "utf8"));
        expect(isAlive(pid), name).toBe(false);
      }
      // The step's stderr log says what gpuplan ended, after its own lines.
      const end = h.events.find((e) => e.event === "gpu.step.end" && e.pipeline === "stubborn");
      expect(end?.event === "gpu.step.end" && end.stderrPath).toBeTruthy();
      const stderrPath = end?.event === "gpu.step.end" ? end.stderrPath! : "";
      expect(readFileSync(stderrPath, "utf8")).toContain("processes of its group still running; ending them");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it("OOM: retries on the GPU, then falls back to the CPU with the CPU env", async () => {
    const plan = planFrom(`
version: 1
name: oom
pipelines:
  - name: seg
    steps:
      - id: segment
        run: [node, oom.mjs, pytorch, --until-cpu]
        memory: torch
        vram: 8GiB
        on_oom: { retries: 1, fallback: cpu }
  - name: nofallback
    steps:
      - id: train
        run: [node, oom.mjs, jax]
        memory: jax
        vram: 8GiB
        on_oom: { retries: 1 }
`);
    h = await execute(plan);
    const seg = h.events.filter((e) => e.pipeline === "seg" && e.event.startsWith("gpu.step."));
    expect(
      seg.map((e) => `${e.event}:${e.device}:${"status" in e ? e.status : "attempt" in e ? e.attempt : ""}`),
    ).toEqual([
      `gpu.step.start:${plan.pipelines[0]!.gpu}:1`,
      `gpu.step.oom:${plan.pipelines[0]!.gpu}:1`,
      `gpu.step.end:${plan.pipelines[0]!.gpu}:oom`,
      `gpu.step.retry:${plan.pipelines[0]!.gpu}:2`,
      `gpu.step.start:${plan.pipelines[0]!.gpu}:2`,
      `gpu.step.oom:${plan.pipelines[0]!.gpu}:2`,
      `gpu.step.end:${plan.pipelines[0]!.gpu}:oom`,
      "gpu.step.retry:cpu:3",
      "gpu.step.start:cpu:3",
      "gpu.step.end:cpu:ok",
    ]);
    expect(h.events.find((e) => e.event === "gpu.step.oom" && e.pipeline === "seg")).toMatchObject({
      framework: "pytorch",
    });
    // The retried step succeeded, the one without a fallback failed after 2 attempts.
    expect(h.summary).toMatchObject({ ok: 1, failed: 1 });
    expect(h.summary.failures[0]).toMatchObject({ pipeline: "nofallback", status: "oom" });
    expect(h.events.filter((e) => e.pipeline === "nofallback" && e.event === "gpu.step.start")).toHaveLength(
      2,
    );
    expect(h.output.find((o) => o.pipeline === "seg" && o.stream === "stdout")?.line).toBe("ran on the CPU");
  });

  it.each([
    ["pytorch", "pytorch"],
    ["pytorch-cublas", "pytorch"],
    ["jax", "jax"],
    ["tensorflow", "tensorflow"],
    ["cupy", "cupy"],
    ["hip", "hip"],
  ])("classifies %s's out-of-memory exit as oom (%s)", async (fixture, framework) => {
    const plan = planFrom(`
version: 1
name: oom-${fixture}
pipelines:
  - name: p
    steps:
      - id: s
        run: [node, oom.mjs, ${fixture}]
        memory: torch
        vram: 1GiB
`);
    h = await execute(plan);
    expect(h.summary.failures[0]).toMatchObject({ status: "oom", exitCode: 1 });
    expect(h.events.find((e) => e.event === "gpu.step.oom")).toMatchObject({ framework });
  });

  it("--lock-timeout: a pipeline that cannot get a slot another process holds in time fails with a hint naming the holder; the other runs", async () => {
    const plan = planFrom(
      `
version: 1
name: lock-timeout
registry: { max_pipelines_per_gpu: 1, max_parallel_pipelines: 4 }
pipelines:
  - name: g
    steps:
      - id: s
        run: [node, record.mjs, g, "10"]
        memory: torch
        vram: 4GiB
  - name: c
    steps:
      - { id: s, run: [node, record.mjs, c, "10"] }
`,
      oneGpu(),
    );
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-run-"));
    const lockDir = join(dir, "locks");
    // Another holder: a lease of its own open file description, as another process's would be.
    const theirs = await createSlotLock({ dir: lockDir }).acquire({
      uuid: plan.registry[0]!.uuid,
      gpu: "cuda:0",
      maxPipelines: 1,
      holder: { pid: 4242, run: "r", pipeline: "theirs", step: "fit", since: "" },
      wait: false,
    });
    try {
      h = await execute(plan, { dir, lock: createRecordingLock(lockDir), lockTimeoutMs: 300 });
    } finally {
      theirs.release();
    }
    expect(h.summary).toMatchObject({ ok: 1, failed: 1 });
    expect(h.summary.failures[0]).toMatchObject({ pipeline: "g", step: "s", status: "lock-timeout" });
    expect(h.summary.failures[0]!.hint).toMatch(
      /waited \d+ ms for a slot of cuda:0 \(held by pid \d+ .*theirs/,
    );
    expect(h.names("gpu.lock.wait")).toEqual(["g/null"]);
    expect(h.events.find((e) => e.event === "gpu.lock.wait")!.holders).toEqual([
      expect.objectContaining({ pipeline: "theirs", step: "fit" }),
    ]);
    expect(records(h.dir).map((r) => r.name)).toEqual(["c", "c"]);
  });

  it("--no-wait: a GPU another process holds stops the run before any step, naming the holder the kernel confirms", async () => {
    const plan = planFrom(
      `
version: 1
name: busy
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: p
    steps:
      - id: s
        run: [node, record.mjs, p, "10"]
        memory: torch
        vram: 4GiB
`,
      oneGpu(),
    );
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-run-"));
    const lockDir = join(dir, "locks");
    const uuid = plan.registry[0]!.uuid;
    // Another holder: a lease of its own open file description, which excludes this run's as
    // another process's would. Its record names pid 4242, which holds nothing: the kernel's
    // answer (this process holds it) is named, with the recorded pid as the one that started it.
    const theirs = await createSlotLock({ dir: lockDir }).acquire({
      uuid,
      gpu: "cuda:0",
      maxPipelines: 1,
      holder: { pid: 4242, run: "r", pipeline: "theirs", step: "fit", since: "" },
      wait: false,
    });
    h = await execute(plan, { dir, lock: createRecordingLock(lockDir), wait: false });
    expect(h.busy).toBeInstanceOf(GpuBusyError);
    expect(h.busy!.holders).toEqual([
      expect.objectContaining({ pid: process.pid, startedBy: 4242, pipeline: "theirs", step: "fit" }),
    ]);
    expect(h.summary).toMatchObject({ interrupted: true, ok: 0, failed: 0, skipped: 0 });
    expect(records(h.dir)).toEqual([]);
    // Let go outside: the same machine runs the step.
    theirs.release();
    const again = await execute(plan, { dir, lock: createRecordingLock(lockDir), wait: false });
    expect(again.busy).toBeNull();
    expect(again.summary).toMatchObject({ ok: 1, interrupted: false });
    expect(records(h.dir).map((r) => r.name)).toEqual(["p", "p"]);
  });

  it("--no-wait: the run's own pipelines queue behind each other on a GPU with fewer slots than pipelines (not busy, nothing interrupted)", async () => {
    const plan = planFrom(
      `
version: 1
name: own-queue
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: p-{p}
    matrix: { p: [1, 2, 3] }
    steps:${gpuStep("s")}
`,
      oneGpu(),
    );
    h = await execute(plan, { wait: false });
    expect(h.busy).toBeNull();
    expect(h.summary).toMatchObject({ ok: 3, failed: 0, interrupted: false });
    expect(maxConcurrent(records(h.dir))).toBe(1);
    // In the run's turns, as without --no-wait: one asks the lock at a time per slot, not all of
    // them (every queued one polled the lock: 1,000 pipelines took 84 s instead of 8).
    expect(h.lock.peakAsking.get("cuda:0")).toBe(1);
  });

  it("a run without GPU pipelines gets a lock that fails loudly, as a bug, if a GPU slot is ever asked of it", async () => {
    const plan = planFrom(`
version: 1
name: misuse
pipelines:
  - name: g
    steps:${gpuStep("a").replaceAll("{p}", "g")}
`);
    const lock = Object.assign(noGpuLock(), {
      calls: [],
      held: new Map(),
      peak: new Map(),
      peakAsking: new Map(),
    });
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-run-"));
    try {
      await expect(execute(plan, { dir, lock })).rejects.toBeInstanceOf(InternalError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
    expect(() => noGpuLock().dir).toThrow(InternalError);
  });

  it("a gpus: 2 pipeline takes a slot of each GPU in UUID order and its step sees both, its own first", async () => {
    const plan = planFrom(`
version: 1
name: two
pipelines:
  - name: dp
    gpus: 2
    steps:
      - id: train
        run: [node, record.mjs, dp, "10"]
        memory: torch
        vram: 4GiB
`);
    h = await execute(plan);
    expect(h.summary.ok).toBe(1);
    const uuids = new Map(plan.registry.map((r) => [r.gpu, r.uuid]));
    const pipeline = plan.pipelines[0]!;
    expect(pipeline.gpus).toHaveLength(2);
    const acquired = h.lock.calls.filter((c) => c.call === "acquired").map((c) => uuids.get(c.gpu)!);
    expect(acquired).toEqual([...acquired].sort());
    const step = pipeline.steps[0]!;
    const others = pipeline.gpus.filter((g) => g !== step.device).map((g) => uuids.get(g));
    expect(records(h.dir)[0]!.cuda).toBe([step.uuid, ...others].join(","));
  });

  it("shell: true runs through /bin/sh -c, with the step's env and cwd resolved against the pipeline's directory", async () => {
    const plan = planFrom(`
version: 1
name: shell
pipelines:
  - name: sh
    steps:
      - id: s
        run: 'echo "$GPUPLAN_PIPELINE/$GPUPLAN_STEP in $(basename "$PWD") with [$CUDA_VISIBLE_DEVICES] $GREETING" && exit 4'
        shell: true
        cwd: ..
        env: { GREETING: hello }
        memory: numpy
`);
    h = await execute(plan);
    expect(h.output.map((o) => o.line)).toEqual(["sh/s in fixtures with [] hello"]);
    expect(h.summary.failures[0]).toMatchObject({ status: "error", exitCode: 4 });
  });

  it("a second interrupt kills a step that ignores the first at once, without the grace period", async () => {
    const plan = planFrom(`
version: 1
name: stubborn
pipelines:
  - name: s
    steps:
      - id: deaf
        run: [node, -e, "process.on('SIGINT', () => {}); console.log('deaf now'); setInterval(() => {}, 1000)"]
        memory: numpy
`);
    const interrupt = new AbortController();
    const killNow = new AbortController();
    let interruptedAt = 0;
    // Interrupted once it ignores SIGINT (it says so), however long starting it took.
    const onOutput = (_p: string, _s: string, _stream: string, line: string) => {
      if (line !== "deaf now") return;
      interruptedAt = Date.now();
      interrupt.abort();
      setTimeout(() => killNow.abort(), 300);
    };
    h = await execute(plan, {
      signal: interrupt.signal,
      killNow: killNow.signal,
      killGraceMs: 20_000,
      onOutput,
    });
    // Ended by the second interrupt, long before the 20 s grace period.
    expect(Date.now() - interruptedAt).toBeLessThan(10_000);
    expect(h.events.find((e) => e.event === "gpu.step.end")).toMatchObject({
      status: "interrupted",
      signal: "SIGKILL",
    });
  }, 30_000);

  it("emits the telemetry contract: every event has ts, event, run, pipeline, step, device", async () => {
    const plan = planFrom(`
version: 1
name: events
pipelines:
  - name: g
    steps:${gpuStep("a").replaceAll("{p}", "g")}
`);
    const sampler = {
      gpus: async () =>
        plan.registry.map((r) => ({
          gpu: r.gpu,
          uuid: r.uuid,
          totalBytes: r.memoryBytes,
          usedBytes: 1,
          freeBytes: r.memoryBytes - 1,
        })),
      cpu: async () => ({ totalBytes: 100, availableBytes: 40 }),
      prefetch: () => {},
      fresh() {
        return this.gpus();
      },
    };
    h = await execute(plan, { sampler });
    for (const e of h.events) {
      expect(Object.keys(e).slice(0, 6)).toEqual(["ts", "event", "run", "pipeline", "step", "device"]);
      expect(e.ts).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    }
    const names = h.events.map((e) => e.event);
    expect(names[0]).toBe("run.start");
    expect(names.at(-1)).toBe("run.end");
    // No gpu.lock.wait: the slot was free (a wait is announced only when there is one).
    expect(names).not.toContain("gpu.lock.wait");
    for (const name of [
      "gpu.lock.acquired",
      "gpu.step.start",
      "gpu.step.end",
      "gpu.lock.released",
      "gpu.memory.snapshot",
    ]) {
      expect(names).toContain(name);
    }
    const end = h.events.find((e) => e.event === "gpu.step.end")!;
    expect(end).toMatchObject({ status: "ok", exitCode: 0, attempt: 1 });
    expect(typeof end.durationMs).toBe("number");
    const snaps = h.events.filter((e) => e.event === "gpu.memory.snapshot");
    expect(snaps.map((s) => s.at).sort()).toEqual(["step.end", "step.start"]);
    expect(snaps[0]!.gpus).toEqual([expect.objectContaining({ gpu: plan.pipelines[0]!.gpu, usedBytes: 1 })]);
  });

  it("skips steps completed in an earlier attempt of the run (resume)", async () => {
    const plan = planFrom(`
version: 1
name: resume
pipelines:
  - name: r
    steps:
      - id: a
        run: [node, record.mjs, a, "1"]
        memory: numpy
      - id: b
        run: [node, record.mjs, b, "1"]
        memory: numpy
        needs: [a]
`);
    h = await execute(plan, { completed: new Set([stepKey("r", "a")]) });
    expect(records(h.dir).map((r) => r.name)).toEqual(["b", "b"]);
    expect(h.names("gpu.step.skip")).toEqual(["r/a"]);
  });

  it("an interrupt forwards the signal to running steps and starts nothing more", async () => {
    const plan = planFrom(`
version: 1
name: interrupt
pipelines:
  - name: i
    steps:
      - id: long
        run: [node, record.mjs, long, "20000"]
        memory: numpy
      - id: after
        run: [node, record.mjs, after, "1"]
        memory: numpy
`);
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-run-"));
    const controller = new AbortController();
    // Interrupted once the step runs (it has recorded its start), however long starting it took.
    const poll = setInterval(() => {
      if (records(dir).length > 0) {
        clearInterval(poll);
        controller.abort();
      }
    }, 20);
    h = await execute(plan, { dir, signal: controller.signal });
    clearInterval(poll);
    expect(h.summary).toMatchObject({ interrupted: true, ok: 0, failed: 0 });
    expect(records(h.dir).map((r) => `${r.what}:${r.name}`)).toEqual(["enter:long"]);
    expect(h.events.find((e) => e.event === "gpu.step.end")).toMatchObject({
      status: "interrupted",
      signal: "SIGINT",
    });
  }, 30_000);
});

/** A process that exists and is not a zombie (an exited child its parent, maybe PID 1, has not reaped yet). */
function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2, stat.lastIndexOf(")") + 3) !== "Z";
  } catch {
    return false;
  }
}
