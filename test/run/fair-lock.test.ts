// Fairness across processes (#12 item 4): two `gpuplan run` processes competing for a one-slot
// fake GPU take turns — neither waits for more than two of the other's pipelines in a row (on
// flock, one waited for 18–20 of the other's 20). Read from each run's gpu.lock events.
import { spawn } from "node:child_process";
import { copyFileSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
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

const PIPELINES = 10;

function machine() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const cwd = t.dir;
  copyFileSync(join(FIXTURES, "record.mjs"), join(cwd, "record.mjs"));
  writeFileSync(
    join(cwd, "p.yaml"),
    `
version: 1
name: fair
registry: { max_pipelines_per_gpu: 1, max_parallel_pipelines: 4 }
pipelines:
  - name: p-{n}
    matrix: { n: [${Array.from({ length: PIPELINES }, (_, i) => i + 1).join(", ")}] }
    steps:
      - { id: s, run: [node, record.mjs, "p-{n}", "150"], memory: torch, vram: 4GiB }
`,
  );
  const scenario = join(cwd, "one.scenario");
  writeFileSync(
    scenario,
    `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.count = 1\n`,
  );
  const env = {
    ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
    GPUPLAN_LOCK_DIR: join(cwd, "locks"),
    CI: "1",
  };
  const compiled = gpuplan(["compile", "p.yaml", "-o", "plan.json"], { cwd, env });
  expect(compiled.exitCode, compiled.stderr).toBe(0);
  return { cwd, env };
}

const run = (cwd: string, env: NodeJS.ProcessEnv) =>
  new Promise<{ code: number | null; stderr: string }>((resolve) => {
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "plan.json", "--ui", "plain"],
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
    child.on("exit", (code) => resolve({ code, stderr }));
  });

interface LockEvent {
  ts: string;
  event: string;
  run: string;
  step: string | null;
}

describe.skipIf(!fakeLibsBuilt)("two gpuplan runs on a one-slot GPU", () => {
  it("take turns: neither waits for more than two of the other's pipelines in a row", async () => {
    const { cwd, env } = machine();
    const first = run(cwd, env);
    // The second starts while the first is under way (its first pipelines are taking the GPU).
    await new Promise((r) => setTimeout(r, 400));
    const results = await Promise.all([first, run(cwd, env)]);
    for (const r of results) expect(r.code, r.stderr).toBe(0);
    const runsDir = join(cwd, ".gpuplan", "runs");
    const events = readdirSync(runsDir).flatMap((id) =>
      readFileSync(join(runsDir, id, "events.jsonl"), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l) as LockEvent)
        .filter((e) => e.event.startsWith("gpu.lock.") && e.step === null),
    );
    const runs = [...new Set(events.map((e) => e.run))].sort();
    expect(runs).toHaveLength(2);
    const at = (e: LockEvent) => Date.parse(e.ts);
    // Who got the GPU, in order, from the moment both runs were waiting for it.
    const bothWaiting = Math.max(
      ...runs.map((r) =>
        Math.min(...events.filter((e) => e.run === r && e.event === "gpu.lock.wait").map(at)),
      ),
    );
    const turns = events
      .filter((e) => e.event === "gpu.lock.acquired" && at(e) > bothWaiting)
      .sort((a, b) => at(a) - at(b))
      .map((e) => e.run);
    const left = new Map(runs.map((r) => [r, turns.filter((t) => t === r).length]));
    let longest = 0;
    let streak = 0;
    for (let i = 0; i < turns.length; i++) {
      streak = i > 0 && turns[i] === turns[i - 1] ? streak + 1 : 1;
      left.set(turns[i]!, left.get(turns[i]!)! - 1);
      // A streak counts only while the other run still had pipelines waiting.
      const other = runs.find((r) => r !== turns[i])!;
      if (left.get(other)! > 0) longest = Math.max(longest, streak);
    }
    expect(turns.length).toBeGreaterThan(PIPELINES);
    expect(longest, turns.map((r) => (r === runs[0] ? "A" : "B")).join("")).toBeLessThanOrEqual(2);
  }, 60_000);
});
