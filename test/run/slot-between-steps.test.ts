// A pipeline holds its GPU slot only while one of its GPU steps runs or is ready to run (#12
// item 13): two real `gpuplan run` processes on a fake one-slot GPU. Pipeline A runs a GPU step, a
// long CPU step and a GPU step; B, started while A's CPU step runs, runs its GPU step meanwhile,
// and `gpuplan locks` shows nobody holding the GPU during A's CPU step. A's second GPU step takes
// the slot again on the same GPU.
import { type ChildProcess, spawn } from "node:child_process";
import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";
import { FIXTURES } from "./helpers/harness.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

const planText = (name: string, steps: string) => `
version: 1
name: ${name}
registry: { max_pipelines_per_gpu: 1, max_parallel_pipelines: 4 }
pipelines:
  - name: ${name}
    steps:
${steps}
`;

const A_STEPS = `
      - { id: g1, run: [node, record.mjs, a-g1, "100"], memory: torch, vram: 4GiB }
      - { id: c, run: [node, record.mjs, a-c, "4000"], memory: numpy, needs: [g1] }
      - { id: g2, run: [node, record.mjs, a-g2, "100"], memory: torch, vram: 4GiB, needs: [c] }
`;
const B_STEPS = `
      - { id: g, run: [node, record.mjs, b-g, "100"], memory: torch, vram: 4GiB }
`;

/** A one-GPU fake machine with both plans compiled (one slot on the GPU). */
function machine() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const cwd = t.dir;
  copyFileSync(join(FIXTURES, "record.mjs"), join(cwd, "record.mjs"));
  const scenario = join(cwd, "one.scenario");
  writeFileSync(
    scenario,
    `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.count = 1\n`,
  );
  const env = {
    ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
    GPUPLAN_LOCK_DIR: join(cwd, "locks"),
    RECORD_FILE: join(cwd, "record.jsonl"),
    CI: "1",
  };
  for (const [name, steps] of [
    ["a", A_STEPS],
    ["b", B_STEPS],
  ] as const) {
    writeFileSync(join(cwd, `${name}.yaml`), planText(name, steps));
    const compiled = gpuplan(["compile", `${name}.yaml`, "-o", `${name}.json`], { cwd, env });
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(cwd, `${name}.json`), "utf8"));
    expect(plan.registry.map((g: { maxPipelines: number }) => g.maxPipelines)).toEqual([1]);
  }
  return { cwd, env };
}

function start(cwd: string, env: NodeJS.ProcessEnv, plan: string, ...args: string[]) {
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/gpuplan.js"), "run", plan, "--ui", "plain", ...args],
    {
      cwd,
      env: { ...env, NO_COLOR: "1" },
      stdio: ["ignore", "ignore", "pipe"],
    },
  );
  let stderr = "";
  child.stderr.on("data", (d) => {
    stderr += String(d);
  });
  const done = new Promise<{ code: number | null; stderr: string }>((resolve) =>
    child.on("exit", (code) => resolve({ code, stderr })),
  );
  return { child, done };
}

type Rec = { what: "enter" | "exit"; name: string; t: number };
const records = (cwd: string): Rec[] => {
  const file = join(cwd, "record.jsonl");
  if (!existsSync(file)) return [];
  return readFileSync(file, "utf8")
    .trim()
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l) as Rec);
};
const at = (rs: Rec[], name: string, what: Rec["what"]) =>
  rs.find((r) => r.name === name && r.what === what)?.t;

async function until(check: () => boolean, ms: number): Promise<void> {
  const deadline = Date.now() + ms;
  while (!check()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 25));
  }
}

let children: ChildProcess[] = [];
afterEach(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
  children = [];
});

describe.skipIf(!fakeLibsBuilt)("a pipeline between GPU steps", () => {
  it("gives its slot back for its CPU step: another process's GPU step runs meanwhile, and locks shows no holder", async () => {
    const { cwd, env } = machine();
    const a = start(cwd, env, "a.json");
    children.push(a.child);
    await until(() => at(records(cwd), "a-c", "enter") !== undefined, 20_000);
    // A runs its CPU step: nobody holds the GPU (the slot went back when g1 ended).
    const locks = gpuplan(["locks", "--json"], { cwd, env });
    expect(locks.exitCode, locks.stderr).toBe(0);
    const gpus = JSON.parse(locks.stdout).gpus as { slots: { holder: { pipeline: string } | null }[] }[];
    expect(gpus.flatMap((g) => g.slots.map((s) => s.holder?.pipeline))).toEqual([]);
    const b = start(cwd, env, "b.json");
    children.push(b.child);
    const [ra, rb] = await Promise.all([a.done, b.done]);
    expect(ra.code, ra.stderr).toBe(0);
    expect(rb.code, rb.stderr).toBe(0);
    const rs = records(cwd);
    // B's GPU step ran inside A's CPU step, not after A's last GPU step.
    expect(at(rs, "b-g", "enter")!).toBeGreaterThan(at(rs, "a-c", "enter")!);
    expect(at(rs, "b-g", "exit")!).toBeLessThan(at(rs, "a-c", "exit")!);
    // A's GPU steps ran on the same GPU, each under a slot it took (two acquisitions, two releases).
    const events = readFileSync(join(cwd, ".gpuplan/runs", runOf(cwd, "a"), "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; pipeline: string | null; gpu?: string });
    const acquired = events.filter((e) => e.event === "gpu.lock.acquired" && e.pipeline === "a");
    const released = events.filter((e) => e.event === "gpu.lock.released" && e.pipeline === "a");
    expect(acquired.map((e) => e.gpu)).toEqual(["cuda:0", "cuda:0"]);
    expect(released).toHaveLength(2);
  }, 60_000);

  it("a slot wait past --lock-timeout when a GPU step takes the slot again is that step's, not the pipeline's first", async () => {
    const { cwd, env } = machine();
    writeFileSync(
      join(cwd, "hold.yaml"),
      planText(
        "hold",
        `      - { id: g, run: [node, record.mjs, hold-g, "8000"], memory: torch, vram: 4GiB }\n`,
      ),
    );
    expect(gpuplan(["compile", "hold.yaml", "-o", "hold.json"], { cwd, env }).exitCode).toBe(0);
    const a = start(cwd, env, "a.json", "--lock-timeout", "500ms");
    children.push(a.child);
    await until(() => at(records(cwd), "a-c", "enter") !== undefined, 20_000);
    // Another process takes the slot during A's CPU step and keeps it past A's --lock-timeout.
    const hold = start(cwd, env, "hold.json");
    children.push(hold.child);
    await until(() => at(records(cwd), "hold-g", "enter") !== undefined, 20_000);
    const ra = await a.done;
    hold.child.kill("SIGINT");
    await hold.done;
    expect(ra.code, ra.stderr).toBe(1);
    const events = readFileSync(join(cwd, ".gpuplan/runs", runOf(cwd, "a"), "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; step: string | null; status?: string });
    const ends = events.filter((e) => e.event === "gpu.step.end").map((e) => `${e.step} ${e.status}`);
    expect(ends).toEqual(["g1 ok", "c ok", "g2 lock-timeout"]);
    expect(events.filter((e) => e.event === "gpu.step.skip")).toEqual([]);
    expect(events.at(-1)).toMatchObject({ event: "run.end", ok: 2, failed: 1, skipped: 0 });
  }, 60_000);
});

/** The run folder of the run of plan NAME (the one whose plan.json names it). */
function runOf(cwd: string, name: string): string {
  for (const id of readdirSync(join(cwd, ".gpuplan/runs")))
    if (JSON.parse(readFileSync(join(cwd, ".gpuplan/runs", id, "plan.json"), "utf8")).name === name)
      return id;
  throw new Error(`no run of ${name}`);
}
