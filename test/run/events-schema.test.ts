// The run events are machine output with a contract: every line gpuplan writes to events.jsonl,
// to an --events file and to stdout with --ui json must match schemas/run-events.schema.json.
// Real runs through the built CLI on a fake one-GPU machine (fake NVML), with steps that end ok,
// fail, run out of memory and fall back to the CPU, time out, wait for slots (exclusive steps
// too), use a warm worker, are skipped on --resume, and wait past --lock-timeout.
import { spawn } from "node:child_process";
import { copyFileSync, existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import validateRunEvent from "../../src/generated/run-events-validator.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";
import { FIXTURES } from "./helpers/harness.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const PIPELINE = `
version: 1
name: events
registry: { max_pipelines_per_gpu: 2, max_parallel_pipelines: 8 }
pipelines:
  - name: ok-{n}
    matrix: { n: [1, 2, 3] }
    steps:
      - id: a
        run: [node, record.mjs, "ok-{n}-a", "300"]
        memory: torch
        vram: 4GiB
      - id: heavy
        run: [node, record.mjs, "ok-{n}-heavy", "50"]
        memory: torch
        vram: 4GiB
        exclusive: true
  - name: bad
    steps:
      - id: one
        run: [node, fail.mjs, "3"]
        memory: torch
        vram: 1GiB
      - id: two
        run: [node, record.mjs, bad-two, "10"]
        memory: torch
        vram: 1GiB
        needs: [one]
  - name: oom
    steps:
      - id: seg
        run: [node, oom.mjs, pytorch, --until-cpu]
        memory: torch
        vram: 4GiB
        on_oom: { retries: 1, fallback: cpu }
  - name: slow
    steps:
      - id: hang
        run: [node, record.mjs, slow, "20000"]
        memory: torch
        vram: 1GiB
        timeout: 300ms
  - name: host
    steps:
      - id: s
        run: [node, record.mjs, host-s, "10"]
        memory: numpy
`;

/** Warm workers: one slot, so the second pipeline reuses the first one's worker. */
const WARM = `
version: 1
name: warm
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: warm-{n}
    matrix: { n: [1, 2] }
    steps:
      - id: seg
        memory: torch
        vram: 4GiB
        worker: { run: [node, worker.mjs], key: seg }
        keep_warm: { ttl: 5m }
`;

/** Two pipelines, one slot that another gpuplan holds (HOLD): each waits past --lock-timeout. */
const CONTENDED = `
version: 1
name: contended
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: c-{n}
    matrix: { n: [1, 2] }
    steps:
      - id: first
        run: [node, record.mjs, "c-{n}", "2000"]
        memory: torch
        vram: 4GiB
      - id: second
        run: [node, record.mjs, "c-{n}-2", "10"]
        memory: torch
        vram: 4GiB
`;

/** Holds the one slot for as long as a test needs it. */
const HOLD = `
version: 1
name: hold
registry: { max_pipelines_per_gpu: 1 }
pipelines:
  - name: hold
    steps:
      - { id: s, run: [node, record.mjs, hold, "60000"], memory: torch, vram: 4GiB }
`;

function machine() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const cwd = t.dir;
  for (const f of ["record.mjs", "fail.mjs", "oom.mjs"]) copyFileSync(join(FIXTURES, f), join(cwd, f));
  copyFileSync(join(FIXTURES, "warm/worker.mjs"), join(cwd, "worker.mjs"));
  writeFileSync(join(cwd, "p.yaml"), PIPELINE);
  writeFileSync(join(cwd, "contended.yaml"), CONTENDED);
  writeFileSync(join(cwd, "hold.yaml"), HOLD);
  writeFileSync(join(cwd, "warm.yaml"), WARM);
  // One H100 (a key given twice takes its last value).
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
  return { cwd, env };
}

const lines = (text: string): unknown[] =>
  text
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as unknown);

/** Every line valid, with the schema's own error when one is not. */
function expectValid(events: readonly unknown[], where: string): void {
  for (const [i, e] of events.entries()) {
    const ok = validateRunEvent(e);
    expect(
      ok,
      `${where} line ${i + 1}: ${JSON.stringify(e)}\n${JSON.stringify(validateRunEvent.errors)}`,
    ).toBe(true);
  }
}

const names = (events: readonly unknown[]) => new Set(events.map((e) => (e as { event: string }).event));
const runDirOf = (events: readonly unknown[]) => (events[0] as { runDir: string }).runDir;

describe.skipIf(!fakeLibsBuilt)("run events match schemas/run-events.schema.json", () => {
  it("every line of events.jsonl, --events and --ui json of real runs: a fresh run, its resume, warm workers", () => {
    const { cwd, env } = machine();

    const first = gpuplan(["run", "p.yaml", "--ui", "json", "--events", "all.jsonl"], { cwd, env });
    expect(first.exitCode, first.stderr).toBe(1);
    const stdout = lines(first.stdout);
    expectValid(stdout, "--ui json (first run)");
    const events = lines(readFileSync(join(cwd, runDirOf(stdout), "events.jsonl"), "utf8"));
    expectValid(events, "events.jsonl (first run)");
    // stdout is the events, then the summary line.
    expect(stdout.slice(0, -1)).toEqual(events);
    expect(stdout.at(-1)).toMatchObject({ event: "run.summary", failed: 2 });
    expect(stdout[0]).toMatchObject({ event: "run.start", schema: "gpuplan/run-events@1" });
    const warm = gpuplan(["run", "warm.yaml", "--ui", "json"], { cwd, env });
    expect(warm.exitCode, warm.stderr).toBe(0);
    const warmEvents = lines(warm.stdout);
    expectValid(warmEvents, "--ui json (warm workers)");
    expectValid(lines(readFileSync(join(cwd, runDirOf(warmEvents), "events.jsonl"), "utf8")), "events.jsonl");
    const seen = names([...events, ...warmEvents]);
    for (const name of [
      "run.start",
      "run.end",
      "gpu.lock.wait",
      "gpu.lock.acquired",
      "gpu.lock.released",
      "gpu.step.start",
      "gpu.step.end",
      "gpu.step.skip",
      "gpu.step.oom",
      "gpu.step.timeout",
      "gpu.step.retry",
      "gpu.memory.snapshot",
      "gpu.model.load_start",
      "gpu.model.load_complete",
      "gpu.model.inference_start",
      "gpu.model.inference_end",
      "gpu.model.cache_store",
      "gpu.model.cache_reuse",
      "gpu.model.cache_evict",
      "gpu.model.cleanup",
    ])
      expect(seen, name).toContain(name);
    // The exclusive steps waited for every slot, and the CPU fallback was announced.
    expect(events).toContainEqual(expect.objectContaining({ event: "gpu.lock.wait", exclusive: true }));
    expect(events).toContainEqual(expect.objectContaining({ event: "gpu.step.retry", nextDevice: "cpu" }));

    const id = runDirOf(stdout).split("/").at(-1)!;
    const resumed = gpuplan(["run", "p.yaml", "--resume", id, "--ui", "json", "--events", "all.jsonl"], {
      cwd,
      env,
    });
    expect(resumed.exitCode, resumed.stderr).toBe(1);
    const again = lines(resumed.stdout);
    expectValid(again, "--ui json (resumed)");
    expect(again).toContainEqual(expect.objectContaining({ event: "gpu.step.skip", cause: "completed" }));
    // events.jsonl of the run now holds both attempts; --events appended both too.
    expectValid(lines(readFileSync(join(cwd, runDirOf(stdout), "events.jsonl"), "utf8")), "events.jsonl");
    const appended = lines(readFileSync(join(cwd, "all.jsonl"), "utf8"));
    expect(appended).toHaveLength(events.length + again.length - 1);
    expectValid(appended, "--events");
  }, 60_000);

  it("every line of a run that waits past --lock-timeout for a slot another gpuplan holds", async () => {
    const { cwd, env } = machine();
    // Another gpuplan takes the GPU's one slot and keeps it until the end of the test.
    const holder = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "hold.yaml", "--ui", "plain"],
      {
        cwd,
        env: { ...process.env, ...env, NO_COLOR: "1" },
        stdio: "ignore",
      },
    );
    const held = new Promise((resolve) => holder.on("exit", resolve));
    cleanups.push(() => holder.kill("SIGKILL"));
    const record = join(cwd, "record.jsonl");
    const deadline = Date.now() + 30_000;
    while (!(existsSync(record) && readFileSync(record, "utf8").includes('"hold"'))) {
      if (Date.now() > deadline) throw new Error("the other gpuplan never took its slot");
      await new Promise((r) => setTimeout(r, 50));
    }
    const contended = gpuplan(["run", "contended.yaml", "--ui", "json", "--lock-timeout", "300ms"], {
      cwd,
      env,
    });
    holder.kill("SIGTERM");
    await held;
    expect(contended.exitCode, contended.stderr).toBe(1);
    const waited = lines(contended.stdout);
    expectValid(waited, "--ui json (lock timeout)");
    expect(waited).toContainEqual(expect.objectContaining({ event: "gpu.step.end", status: "lock-timeout" }));
    expect(waited).toContainEqual(expect.objectContaining({ event: "gpu.step.skip", cause: "no-slot" }));
    expectValid(lines(readFileSync(join(cwd, runDirOf(waited), "events.jsonl"), "utf8")), "events.jsonl");
  }, 60_000);
});
