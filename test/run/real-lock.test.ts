// `gpuplan run` with the real flock slot lock, GPUs from fake NVML: several gpuplan processes
// competing for 2 GPUs × 2 slots never put more steps on a GPU than it has slots, exclusive steps
// run alone, and --no-wait on a busy GPU exits 75 naming the holder.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";
import { FIXTURES, maxConcurrent, type Record } from "./helpers/harness.js";
import { exited, startFixture } from "./lock/processes.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

/** A working dir with record.mjs, a 2-GPU fake machine and its own lock dir. */
function machine(pipeline: string) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const cwd = t.dir;
  copyFileSync(join(FIXTURES, "record.mjs"), join(cwd, "record.mjs"));
  writeFileSync(join(cwd, "p.yaml"), pipeline);
  const scenario = join(cwd, "two.scenario");
  // The first two H100s only (a key given twice takes its last value).
  writeFileSync(
    scenario,
    `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.count = 2\n`,
  );
  mkdirSync(join(cwd, "locks"));
  const env = {
    ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
    GPUPLAN_LOCK_DIR: join(cwd, "locks"),
    RECORD_FILE: join(cwd, "record.jsonl"),
    CI: "1",
  };
  const compiled = gpuplan(["compile", "p.yaml", "-o", "plan.json"], { cwd, env });
  expect(compiled.exitCode, compiled.stderr).toBe(0);
  const plan = JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8"));
  return { cwd, env, plan };
}

const runAsync = (cwd: string, env: NodeJS.ProcessEnv, args: string[]) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "run", ...args], {
      cwd,
      env: { ...env, NO_COLOR: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    });
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    child.on("exit", (code) => resolve({ code, stderr }));
  });

describe.skipIf(!fakeLibsBuilt)("gpuplan run with the real slot lock", () => {
  it("many gpuplan processes on 2 GPUs × 2 slots: never more steps on a GPU than slots, exclusive steps alone", async () => {
    const { cwd, env, plan } = machine(`
version: 1
name: contention
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 8 }
pipelines:
  - name: w-{n}
    matrix: { n: [1, 2, 3, 4] }
    steps:
      - id: load
        run: [node, record.mjs, "{n}-load", "40"]
        memory: torch
        vram: 4GiB
      - id: heavy
        run: [node, record.mjs, "{n}-heavy", "40"]
        memory: torch
        vram: 4GiB
        exclusive: true
      - id: save
        run: [node, record.mjs, "{n}-save", "40"]
        memory: torch
        vram: 4GiB
`);
    expect(plan.registry.map((g: { maxPipelines: number }) => g.maxPipelines)).toEqual([2, 2]);
    const results = await Promise.all(
      Array.from({ length: 4 }, () => runAsync(cwd, env, ["plan.json", "--ui", "plain"])),
    );
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const records = readFileSync(join(cwd, "record.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as Record & { run: string });
    expect(records.filter((r) => r.what === "enter")).toHaveLength(4 * 4 * 3);
    for (const gpu of ["cuda:0", "cuda:1"]) {
      const on = records.filter((r) => r.device === gpu);
      expect(maxConcurrent(on)).toBeLessThanOrEqual(2);
      for (const enter of on.filter((r) => r.what === "enter" && r.name.endsWith("-heavy"))) {
        const exit = on.find((r) => r.what === "exit" && r.pid === enter.pid)!;
        const overlapping = on.filter((r) => r.pid !== enter.pid && r.t > enter.t && r.t < exit.t);
        expect(overlapping).toEqual([]);
      }
    }
  }, 60_000);

  it("kill -9 of gpuplan mid-step: the step keeps its slot and goes on writing its log until it exits, then the slot is free", async () => {
    // The step prints after gpuplan is gone: its output goes to its log files, not through a pipe
    // that a dead gpuplan would leave without a reader (SIGPIPE at the next line). It goes on only
    // once the test has seen its slot held (the release file), however slowly the machine runs.
    const { cwd, env } = machine(`
version: 1
name: orphan
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: only
    steps:
      - id: long
        run: [sh, -c, "echo before; node record.mjs long 1; while [ ! -e release ]; do sleep 0.05; done; echo after-kill; echo on-stderr >&2; node record.mjs done 1"]
        memory: torch
        vram: 4GiB
`);
    const record = join(cwd, "record.jsonl");
    const first = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "plan.json", "--ui", "plain"],
      {
        cwd,
        env,
        stdio: "ignore",
      },
    );
    const text = () => (existsSync(record) ? readFileSync(record, "utf8") : "");
    const until = async (done: () => boolean) => {
      for (let i = 0; i < 1000 && !done(); i++) await new Promise((r) => setTimeout(r, 20));
      return done();
    };
    expect(await until(() => text().includes('"enter"'))).toBe(true);
    first.kill("SIGKILL");
    await exited(first);
    const busy = gpuplan(["run", "plan.json", "--no-wait", "--ui", "plain"], { cwd, env });
    expect(busy.exitCode, busy.stderr).toBe(75);
    expect(busy.stderr).toMatch(
      /GPU busy: cuda:\d \(GPU-[0-9a-f]{8}[-0-9a-f]*\) is held by pid \d+ \(only\/long/,
    );
    expect(text()).not.toContain('"name":"done"');
    writeFileSync(join(cwd, "release"), "");
    expect(await until(() => text().includes('"name":"done"') && text().split('"exit"').length > 2)).toBe(
      true,
    );
    await new Promise((r) => setTimeout(r, 200));
    const runs = join(cwd, ".gpuplan", "runs");
    // The killed run's directory (the busy run may have made one too).
    const logs = readdirSync(runs)
      .map((id) => join(runs, id, "logs"))
      .find((dir) => existsSync(join(dir, "only@long.out.log")))!;
    expect(readFileSync(join(logs, "only@long.out.log"), "utf8")).toBe("before\nafter-kill\n");
    expect(readFileSync(join(logs, "only@long.err.log"), "utf8")).toBe("on-stderr\n");
    const free = gpuplan(["run", "plan.json", "--no-wait", "--ui", "plain"], { cwd, env });
    expect(free.exitCode, free.stderr).toBe(0);
  }, 60_000);

  it("--no-wait on a busy GPU exits 75 with 'GPU busy' naming the holder", async () => {
    const { cwd, env, plan } = machine(`
version: 1
name: busy
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: only
    steps:
      - id: s
        run: [node, record.mjs, s, "10"]
        memory: torch
        vram: 4GiB
`);
    const uuid = plan.registry.find((g: { gpu: string }) => g.gpu === plan.pipelines[0].gpu).uuid as string;
    const { child, line } = await startFixture("holder.mjs", [join(cwd, "locks"), uuid]);
    // The holder passes its slot to a child, as gpuplan passes it to a step: both must go.
    const { childPid } = JSON.parse(line) as { childPid: number };
    const killBoth = () => {
      for (const pid of [child.pid!, childPid]) {
        try {
          process.kill(pid, "SIGKILL");
        } catch {
          // already gone
        }
      }
    };
    cleanups.push(killBoth);
    try {
      const r = gpuplan(["run", "plan.json", "--no-wait", "--ui", "plain"], { cwd, env });
      expect(r.exitCode, r.stderr).toBe(75);
      expect(r.stderr).toMatch(
        new RegExp(
          `GPU busy: ${plan.pipelines[0].gpu} \\(GPU-[0-9a-f]{8}[-0-9a-f]*\\) is held by pid ${child.pid} \\(victim/long-step`,
        ),
      );
    } finally {
      killBoth();
      await exited(child);
    }
    // The slot is free once the kernel has reaped the holder's child.
    for (let i = 0; i < 100 && isAlive(childPid); i++) await new Promise((r) => setTimeout(r, 20));
    const r = gpuplan(["run", "plan.json", "--no-wait", "--ui", "plain"], { cwd, env });
    expect(r.exitCode, r.stderr).toBe(0);
  }, 30_000);
  it("--no-wait with several pipelines on busy GPUs exits 75 naming the holders, never an unhandled error", async () => {
    const { cwd, env, plan } = machine(`
version: 1
name: busy-many
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: p-{n}
    matrix: { n: [1, 2, 3, 4] }
    steps:
      - id: s
        run: [node, record.mjs, "p-{n}", "10"]
        memory: torch
        vram: 4GiB
`);
    const holders: { child: ChildProcess; childPid: number }[] = [];
    for (const g of plan.registry as { uuid: string }[]) {
      const { child, line } = await startFixture("holder.mjs", [join(cwd, "locks"), g.uuid]);
      const { childPid } = JSON.parse(line) as { childPid: number };
      holders.push({ child, childPid });
    }
    const killAll = () => {
      for (const h of holders)
        for (const pid of [h.child.pid!, h.childPid]) {
          try {
            process.kill(pid, "SIGKILL");
          } catch {
            // already gone
          }
        }
    };
    cleanups.push(killAll);
    try {
      const r = gpuplan(["run", "plan.json", "--no-wait", "--ui", "plain"], { cwd, env });
      expect(r.exitCode, r.stderr).toBe(75);
      expect(r.stderr).toMatch(/GPU busy: cuda:\d \(GPU-[0-9a-f-]+\) is held by pid \d+ \(victim\/long-step/);
      expect(r.stderr).not.toMatch(/internal error|Unhandled|at .*\.js:\d+/i);
    } finally {
      killAll();
      for (const h of holders) await exited(h.child);
    }
  }, 30_000);
});

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
