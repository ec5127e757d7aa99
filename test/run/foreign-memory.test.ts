// Memory that processes gpuplan did not start hold is taken, as far as admission goes (#16 item
// 3): a fake one-GPU machine (an H100 80GB, a ~60 GiB balanced budget, 4 slots) whose driver
// lists a process of someone else's holding 35 GiB. Four 10 GiB pipelines would run together on
// an idle GPU; here never more than two do (10 + 10 + 35 ≤ 60 < 10 + 10 + 10 + 35), and
// `gpuplan locks` shows the 35 GiB as other processes'.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";
import { FIXTURES, maxConcurrent, records } from "./helpers/harness.js";

const GiB = 1024 ** 3;
let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const PIPELINE = `
version: 1
name: shared
registry: { max_pipelines_per_gpu: 4, max_parallel_pipelines: 8, memory_strategy: balanced }
pipelines:
  - name: p-{n}
    matrix: { n: [1, 2, 3, 4] }
    steps:
      - { id: s, run: [node, record.mjs, "p-{n}", "1200"], memory: torch, vram: 10GiB }
`;

/** Someone else's process on the GPU: a real pid the fake NVML lists with `bytes` of memory. */
function foreignProcess(): ChildProcess {
  const child = spawn("sleep", ["120"], { stdio: "ignore" });
  cleanups.push(() => child.kill("SIGKILL"));
  return child;
}

function machine(foreignBytes: number | null) {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const cwd = t.dir;
  copyFileSync(join(FIXTURES, "record.mjs"), join(cwd, "record.mjs"));
  writeFileSync(join(cwd, "p.yaml"), PIPELINE);
  const scenario = join(cwd, "one.scenario");
  const other = foreignBytes === null ? "" : `nvml.0.processes = ${foreignProcess().pid}:${foreignBytes}\n`;
  writeFileSync(
    scenario,
    `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.count = 1\n${other}`,
  );
  const env = {
    ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
    GPUPLAN_LOCK_DIR: join(cwd, "locks"),
    RECORD_FILE: join(cwd, "record.jsonl"),
    CI: "1",
  };
  const compiled = gpuplan(["compile", "p.yaml", "-o", "plan.json"], { cwd, env });
  expect(compiled.exitCode, compiled.stderr).toBe(0);
  const plan = JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8"));
  plan.registry[0].maxPipelines = 4;
  writeFileSync(join(cwd, "plan.json"), JSON.stringify(plan));
  const budget = plan.registry[0].memoryBudgetBytes - plan.registry[0].warmReserveBytes;
  expect(budget).toBeGreaterThan(55 * GiB);
  expect(budget).toBeLessThan(65 * GiB);
  return { cwd, env };
}

function run(cwd: string, env: NodeJS.ProcessEnv) {
  const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "run", "plan.json", "--ui", "plain"], {
    cwd,
    env: { ...env, NO_COLOR: "1" },
    stdio: ["ignore", "ignore", "pipe"],
  });
  cleanups.push(() => child.kill("SIGKILL"));
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  return new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, stderr })),
  );
}

describe.skipIf(!fakeLibsBuilt)("memory that processes gpuplan did not start hold", () => {
  it("is taken in admission: two 10 GiB pipelines at once beside 35 GiB of others', not four", async () => {
    const { cwd, env } = machine(35 * GiB);
    const done = run(cwd, env);
    // While pipelines hold the GPU, `gpuplan locks` says what the others hold.
    let shown:
      | {
          otherProcessesBytes?: number;
          freeBytes: number | null;
          availableBytes: number | null;
          budgetBytes: number | null;
        }
      | undefined;
    const deadline = Date.now() + 20_000;
    while (!shown && Date.now() < deadline) {
      const r = gpuplan(["locks", "--json"], { cwd, env });
      expect(r.exitCode, r.stderr).toBe(0);
      const [gpu] = JSON.parse(r.stdout).gpus;
      if (gpu?.slots.length > 0) shown = gpu;
      else await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const r = await done;
    expect(r.code, r.stderr).toBe(0);
    expect(shown?.otherProcessesBytes).toBe(35 * GiB);
    expect(shown?.freeBytes).toBeLessThanOrEqual(shown!.budgetBytes! - 35 * GiB);
    expect(shown?.availableBytes).toBe(Math.max(0, shown!.freeBytes!));
    const seen = records(cwd);
    expect(seen.filter((x) => x.what === "exit")).toHaveLength(4);
    expect(maxConcurrent(seen)).toBe(2);
  }, 60_000);

  it("the same GPU with nobody else on it runs all four at once", async () => {
    const { cwd, env } = machine(null);
    const r = await run(cwd, env);
    expect(r.code, r.stderr).toBe(0);
    expect(maxConcurrent(records(cwd))).toBe(4);
  }, 60_000);

  it("the human table says it: 'other processes: 35 GiB'", async () => {
    const { cwd, env } = machine(35 * GiB);
    const done = run(cwd, env);
    let line = "";
    const deadline = Date.now() + 20_000;
    while (!line && Date.now() < deadline) {
      const out = gpuplan(["locks"], { cwd, env: { ...env, NO_COLOR: "1" } }).stdout;
      line = out.split("\n").find((l) => l.startsWith("cuda:0:")) ?? "";
      if (!line) await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await done).code).toBe(0);
    expect(line).toMatch(/other processes: 35(\.0)? GiB/);
  }, 60_000);
});
