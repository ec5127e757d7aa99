// A plan's check against the live machine starts detecting as soon as the plan is read (so the
// probe child starts while the plan is checked) and detects once; plans and runs that are not
// checked against this machine never detect.
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { Inventory } from "../../src/inventory/types.js";
import { planText } from "../../src/plan/plan-text.js";
import { prepareRun } from "../../src/run/prepare/prepare-run.js";
import { inventory } from "../helpers/inventory.js";
import { planFrom } from "./helpers/harness.js";

const gpuPipeline = `
version: 1
name: once
pipelines:
  - name: g
    steps:
      - { id: a, run: [node, record.mjs, a], memory: torch, vram: 1GiB }
`;
const cpuPipeline = `
version: 1
name: once-cpu
registry: { platform_priority: [cpu] }
pipelines:
  - name: c
    steps:
      - { id: a, run: [node, record.mjs, a], memory: numpy }
`;

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

function planFile(text: string, inv: Inventory): string {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-prepare-"));
  const file = join(dir, "plan.json");
  writeFileSync(file, planText(planFrom(text, inv)));
  return file;
}

function countingDetect(inv: Inventory) {
  const calls: unknown[] = [];
  return {
    calls,
    detect: async (options?: unknown) => {
      calls.push(options);
      return inv;
    },
  };
}

describe("prepareRun detects the machine once", () => {
  const machine = inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" }]);

  it("a GPU plan: detection starts with the plan's reading, and verification uses that one answer", async () => {
    const file = planFile(gpuPipeline, machine);
    const { calls, detect } = countingDetect(machine);
    const prepared = await prepareRun({ file, pipelines: [], detect });
    expect(prepared.ok).toBe(true);
    expect(calls).toEqual([undefined]);
  });

  it("hands the run the GPUs it read and when the answer came (the memory sampler's first reading)", async () => {
    const file = planFile(gpuPipeline, machine);
    let answeredAt = 0;
    const detect = async () => {
      await new Promise((r) => setTimeout(r, 20));
      answeredAt = performance.now();
      return machine;
    };
    const prepared = await prepareRun({ file, pipelines: [], detect });
    if (!prepared.ok) throw new Error("not prepared");
    expect(prepared.run.gpuReading?.gpus).toBe(machine.gpus);
    // Timed when detection answered, not when the run was ready.
    expect(prepared.run.gpuReading?.at).toBeGreaterThanOrEqual(answeredAt);
    expect(prepared.run.gpuReading!.at - answeredAt).toBeLessThan(5);
    // Nothing to hand over where nothing was verified.
    const unchecked = await prepareRun({ file, pipelines: [], detect, verify: false });
    if (!unchecked.ok) throw new Error("not prepared");
    expect(unchecked.run.gpuReading).toBeUndefined();
  });

  it("a CPU-only plan, or one not checked here (Slurm's follower), never detects", async () => {
    const cpu = planFile(cpuPipeline, machine);
    const first = countingDetect(machine);
    expect((await prepareRun({ file: cpu, pipelines: [], detect: first.detect })).ok).toBe(true);
    expect(first.calls).toEqual([]);
    const gpu = planFile(gpuPipeline, machine);
    const second = countingDetect(machine);
    const prepared = await prepareRun({ file: gpu, pipelines: [], detect: second.detect, verify: false });
    expect(prepared.ok).toBe(true);
    expect(second.calls).toEqual([]);
  });

  it("a plan that is not valid is refused whatever its early detection does (a failing probe is never unhandled)", async () => {
    const file = planFile(gpuPipeline, machine);
    // Read as a plan with GPUs (so detection starts), then refused by the schema check.
    const broken = { ...JSON.parse(planText(planFrom(gpuPipeline, machine))), pipelines: "none" };
    writeFileSync(file, JSON.stringify(broken));
    let asked = 0;
    const prepared = await prepareRun({
      file,
      pipelines: [],
      detect: async () => {
        asked++;
        throw new Error("probe failed");
      },
    });
    expect(prepared.ok).toBe(false);
    expect(asked).toBe(1);
  });
});
