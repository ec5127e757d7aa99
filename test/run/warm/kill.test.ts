// kill -9 of gpuplan while a warm worker keeps a slot: the worker reads EOF on stdin and exits,
// and with it the last holder of the slot's descriptor, so the slot is free again.
import { spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { createSlotLock } from "../../../src/run/lock/index.js";
import { planFrom, records } from "../helpers/harness.js";
import { built, exited } from "../lock/processes.js";
import { oneGpu, WORKER, workerRecords } from "./helpers.js";

const RUN_PLAN = resolve(import.meta.dirname, "../../../fixtures/run/warm/run-plan.mjs");
const cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.splice(0)) c();
});

async function until(check: () => Promise<boolean> | boolean, timeoutMs = 10_000): Promise<void> {
  const end = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > end) throw new Error("condition not met in time");
    await new Promise((r) => setTimeout(r, 25));
  }
}

describe.skipIf(!built)("kill -9 of gpuplan with a warm worker", () => {
  it("the worker exits when its stdin closes, and the slot it kept is free", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-warm-kill-"));
    cleanups.push(() => rmSync(dir, { recursive: true, force: true }));
    const plan = planFrom(
      `
version: 1
name: kill
registry: { max_pipelines_per_gpu: 1, max_parallel_pipelines: 4 }
pipelines:
  - name: gpu
    steps:
      - id: seg
        memory: torch
        vram: 4GiB
        worker: { run: ${JSON.stringify(["node", WORKER])}, key: m }
  - name: long
    steps:
      - { id: wait, run: [node, ../record.mjs, long, "20000"], memory: numpy }
`,
      oneGpu(),
    );
    const planPath = join(dir, "plan.json");
    writeFileSync(planPath, JSON.stringify(plan));
    const lockDir = join(dir, "locks");
    mkdirSync(lockDir);
    const child = spawn(process.execPath, [RUN_PLAN, planPath, lockDir, join(dir, "run")], {
      env: { ...process.env, RECORD_FILE: join(dir, "record.jsonl") },
      stdio: ["ignore", "ignore", "inherit"],
    });
    cleanups.push(() => {
      child.kill("SIGKILL");
      for (const r of records(dir)) {
        try {
          process.kill(r.pid, "SIGKILL");
        } catch {
          // Gone already.
        }
      }
    });
    const lock = createSlotLock({ dir: lockDir });
    // The GPU pipeline is done; its slot is kept for the warm worker while the CPU pipeline runs.
    await until(async () =>
      (await lock.inspect()).some((s) => s.held && s.holder?.step === "(warm workers)"),
    );
    const worker = workerRecords(dir).find((r) => r.what === "load")!;
    expect(workerRecords(dir).some((r) => r.what === "task")).toBe(true);
    // The worker holds the slot's descriptor itself (inherited as fd 3).
    expect(worker.fd3).toContain(lockDir);

    child.kill("SIGKILL");
    await exited(child);
    await until(() => workerRecords(dir).some((r) => r.what === "exit" && r.pid === worker.pid));
    await until(async () => (await lock.inspect()).every((s) => !s.held));
    const lease = await lock.acquire({
      uuid: plan.registry[0]!.uuid,
      gpu: "cuda:0",
      maxPipelines: 1,
      holder: { pid: process.pid, run: "r", pipeline: "next", step: null, since: "" },
      wait: false,
    });
    expect(lease.slots).toEqual([0]);
    lease.release();
  });
});
