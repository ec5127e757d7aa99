// The long-lived probe child (src/detect/probe-server.ts) through the real FFI path against the
// fake NVML: one child answers round after round and sees the driver's answers change; a child
// that misses its deadline (a hanging driver) or is killed is replaced at the next request, and
// after three failures in a row the server stops trying. A run's checked child, once it has
// answered, serves the sampler instead of a second Node start (spawn-child.ts `serve`).
import type { ChildProcess } from "node:child_process";
import { appendFileSync, readFileSync } from "node:fs";
import { afterEach, describe, expect, it } from "vitest";
import { nowMs } from "../../src/detect/clock.js";
import { openGpuMemoryReader } from "../../src/detect/memory-readings.js";
import { claimServing, releaseServing } from "../../src/detect/prestarted.js";
import { ProbeServer } from "../../src/detect/probe-server.js";
import { childKey, type ProbeTask, startChild } from "../../src/detect/spawn-child.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, scenarioWith } from "./fake-libs.js";

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
const childOptions = (env: NodeJS.ProcessEnv) => ({ env, slowInitMs: 1000, amdDriverLoaded: false });

let closers: (() => void)[] = [];
afterEach(() => {
  for (const c of closers) c();
  closers = [];
});

describe.skipIf(!fakeLibsBuilt)("ProbeServer (fake NVML)", () => {
  it("answers every round from one child, which sees what the driver reports now", async () => {
    const scenario = scenarioWith("busy.scenario", "");
    const log = `${scenario}.init.log`;
    appendFileSync(scenario, `nvml.init_log = ${log}\n`);
    const env = fakeEnv("busy.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario });
    const reader = openGpuMemoryReader(env, 10_000)!;
    closers.push(() => reader.close());
    const first = await reader.read();
    expect(first?.map((g) => g.uuid)).toContain("GPU-0d7c4a4e-8a3e-4b7e-9d3c-2f1a6b5c4d3e");
    appendFileSync(scenario, "nvml.0.processes = 4242:1048576\n");
    const second = await reader.read();
    const gpu0 = second?.find((g) => g.uuid === "GPU-0d7c4a4e-8a3e-4b7e-9d3c-2f1a6b5c4d3e");
    expect(gpu0?.processes).toEqual([expect.objectContaining({ pid: 4242, usedMemoryBytes: 1048576 })]);
    await reader.read();
    // Three rounds, one process: the same pid initialised NVML each time.
    const pids = readFileSync(log, "utf8").trim().split("\n");
    expect(pids).toHaveLength(3);
    expect(new Set(pids).size).toBe(1);
    expect(reader.children()).toBe(1);
  }, 30_000);

  it("close() answers a round still waiting with null at once and keeps nothing alive (a run shorter than the sampler's start)", async () => {
    // The child takes 3 s to initialise NVML; the deadline is a minute: only close() can end the wait.
    const scenario = scenarioWith("busy.scenario", "nvml.init_delay_ms = 3000");
    const env = fakeEnv("busy.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario });
    const server = new ProbeServer([{ name: "nvml", library: fakeLib("nvml") }], childOptions(env), 60_000);
    closers.push(() => server.close());
    const reading = server.read();
    await new Promise((r) => setTimeout(r, 100));
    const started = performance.now();
    server.close();
    expect(await reading).toBeNull();
    expect(performance.now() - started).toBeLessThan(500);
    // Closed is closed: later requests are answered null without a new child.
    expect(await server.read()).toBeNull();
    expect(server.started).toBe(1);
  }, 30_000);

  it("kills a child that misses its deadline, starts another at the next request, and gives up after three", async () => {
    const scenario = scenarioWith("busy.scenario", "nvml.hang_on = nvmlDeviceGetMemoryInfo_v2");
    const env = fakeEnv("busy.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario });
    const server = new ProbeServer([{ name: "nvml", library: fakeLib("nvml") }], childOptions(env), 1500);
    closers.push(() => server.close());
    const started = performance.now();
    expect(await server.read()).toBeNull();
    expect(performance.now() - started).toBeLessThan(10_000);
    expect(server.started).toBe(1);
    expect(await server.read()).toBeNull();
    expect(await server.read()).toBeNull();
    expect(server.started).toBe(3);
    // Given up: no fourth child, an answer at once.
    const t = performance.now();
    expect(await server.read()).toBeNull();
    expect(server.started).toBe(3);
    expect(performance.now() - t).toBeLessThan(100);
  }, 30_000);

  it("replaces a child killed under it, and lets it go at close", async () => {
    const scenario = scenarioWith("busy.scenario", "");
    const log = `${scenario}.init.log`;
    appendFileSync(scenario, `nvml.init_log = ${log}\n`);
    const env = fakeEnv("busy.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario });
    const server = new ProbeServer([{ name: "nvml", library: fakeLib("nvml") }], childOptions(env), 10_000);
    closers.push(() => server.close());
    expect((await server.read())?.[0]?.status).toBe("ok");
    const firstPid = Number(readFileSync(log, "utf8").trim());
    process.kill(firstPid, "SIGKILL");
    await new Promise((r) => setTimeout(r, 200));
    expect((await server.read())?.[0]?.status).toBe("ok");
    const pids = readFileSync(log, "utf8").trim().split("\n").map(Number);
    expect(server.started).toBe(2);
    const secondPid = pids.at(-1)!;
    expect(secondPid).not.toBe(firstPid);
    server.close();
    // Its stdin closed, the child shuts its libraries down and exits.
    for (let i = 0; i < 50 && alive(secondPid); i++) await new Promise((r) => setTimeout(r, 100));
    expect(alive(secondPid)).toBe(false);
  }, 30_000);
});

describe.skipIf(!fakeLibsBuilt)("a run's checked child, serving the sampler (fake NVML and CUDA)", () => {
  const nvml: ProbeTask = { name: "nvml", library: fakeLib("nvml") };
  const cuda: ProbeTask = { name: "cuda", library: fakeLib("cuda") };
  /** A busy-scenario environment whose NVML logs each initialisation's pid. */
  const logged = (extra = "") => {
    const scenario = scenarioWith("busy.scenario", extra);
    const log = `${scenario}.init.log`;
    appendFileSync(scenario, `nvml.init_log = ${log}\n`);
    const env = fakeEnv(
      "busy.scenario",
      { nvml: fakeLib("nvml"), cuda: fakeLib("cuda") },
      { GPUPLAN_FAKE_SCENARIO: scenario },
    );
    const pids = () => readFileSync(log, "utf8").trim().split("\n").map(Number);
    return { env, pids };
  };
  /** The hand-over slot itself (prestarted.ts keeps it on globalThis). */
  const serving = () =>
    ((globalThis as Record<symbol, unknown>)[Symbol.for("gpuplan.detect.servingChildren")] as
      | Map<string, ChildProcess>
      | undefined) ?? new Map<string, ChildProcess>();
  const waitFor = async (done: () => boolean) => {
    for (let i = 0; i < 100 && !done(); i++) await new Promise((r) => setTimeout(r, 50));
    return done();
  };
  /** A check's child of `tasks`, asked to serve `serve`, once its first round has ended. */
  const answered = async (tasks: ProbeTask[], serve: ProbeTask[], extra = "") => {
    const { env, pids } = logged(extra);
    const options = childOptions(env);
    const check = startChild(tasks, { ...options, serve });
    closers.push(() => check.kill());
    check.limit(nowMs() + 20_000);
    const run = await check.run;
    return { env, pids, options, check, run };
  };

  it("answers the check with every probe, then the sampler's rounds with the memory probes alone, in one process", async () => {
    const { env, pids, check, run: first } = await answered([nvml, cuda], [nvml]);
    expect(first.end).toEqual({ kind: "done" });
    expect(first.results.map((r) => [r.name, r.status])).toEqual([
      ["nvml", "ok"],
      ["cuda", "ok"],
    ]);
    const reader = openGpuMemoryReader(env, 10_000)!;
    closers.push(() => reader.close());
    const gpus = await reader.read();
    expect(gpus?.map((g) => g.uuid)).toContain("GPU-0d7c4a4e-8a3e-4b7e-9d3c-2f1a6b5c4d3e");
    expect(await reader.read()).not.toBeNull();
    // Adopted: no sampler child of its own, and every NVML initialisation in the check's process.
    expect(reader.children()).toBe(0);
    expect(pids()).toHaveLength(3);
    expect(new Set(pids())).toEqual(new Set([check.pid]));
  }, 30_000);

  it("a later round runs only the probes it serves, and sends no per-call lines", async () => {
    const { options, check, run } = await answered([nvml, cuda], [nvml]);
    expect(run.end).toEqual({ kind: "done" });
    const child = claimServing(childKey([nvml], options))!;
    expect(child.pid).toBe(check.pid);
    const lines: string[] = [];
    child.stdio[3]!.on("data", (chunk: Buffer) =>
      lines.push(...chunk.toString().split("\n").filter(Boolean)),
    );
    const server = new ProbeServer([nvml], options, 10_000, child);
    closers.push(() => server.close());
    const round = await server.read();
    expect(round?.map((r) => r.name)).toEqual(["nvml"]);
    expect(lines.map((l) => JSON.parse(l).type)).toEqual(["start", "result", "done"]);
    expect(server.started).toBe(0);
  }, 30_000);

  it("is offered only once it has answered well: one that crashed in the check is not, and the sampler starts its own", async () => {
    const { options, run } = await answered([nvml], [nvml], "nvml.crash_on = nvmlDeviceGetCount_v2");
    expect(run.end.kind).toBe("crash");
    expect(run.current?.call).toBe("nvmlDeviceGetCount_v2");
    expect(claimServing(childKey([nvml], options))).toBeNull();
    const server = new ProbeServer([nvml], options, 5_000, null);
    closers.push(() => server.close());
    await server.read();
    expect(server.started).toBe(1);
  }, 30_000);

  it("leaves the slot when it dies waiting, so nobody adopts a dead child", async () => {
    const { options, check, run } = await answered([nvml], [nvml]);
    expect(run.end).toEqual({ kind: "done" });
    process.kill(check.pid!, "SIGKILL");
    await waitFor(() => !alive(check.pid!));
    await new Promise((r) => setTimeout(r, 100));
    // Gone from the slot itself, not only refused by claimServing's liveness check.
    expect(serving().has(childKey([nvml], options))).toBe(false);
    expect(claimServing(childKey([nvml], options))).toBeNull();
  }, 30_000);

  it("one nobody adopts is let go by releaseServing: it shuts its libraries down and exits", async () => {
    const { options, check, run } = await answered([nvml], [nvml]);
    expect(run.end).toEqual({ kind: "done" });
    const child = serving().get(childKey([nvml], options))!;
    expect(child.pid).toBe(check.pid);
    const exited = new Promise<[number | null, string | null]>((resolve) =>
      child.once("exit", (code, signal) => resolve([code, signal])),
    );
    const started = performance.now();
    releaseServing();
    // On its own, well before the 2 s after which it would be killed: exit 0, no signal.
    expect(await exited).toEqual([0, null]);
    expect(performance.now() - started).toBeLessThan(1_500);
    expect(serving().size).toBe(0);
  }, 30_000);

  it("keeps reading through a library that prints at every call: its stderr never fills and stalls a round", async () => {
    // ~1 KB to stdout and stderr at every nvmlInit: 300 rounds are ~300 KB, past what a pipe and
    // a paused stream hold (checked: with its stderr paused, the child stalls before round 300).
    const { options, run } = await answered([nvml], [nvml], `nvml.noise = ${"x".repeat(1000)}`);
    expect(run.end).toEqual({ kind: "done" });
    const server = new ProbeServer([nvml], options, 5_000, claimServing(childKey([nvml], options)));
    closers.push(() => server.close());
    for (let i = 0; i < 300; i++) expect((await server.read())?.[0]?.status).toBe("ok");
    expect(server.started).toBe(0);
  }, 60_000);
});
