// Pinning GPU steps to their GPU's local CPUs: the inventory's cpuAffinity reaches the plan, and
// a step on that GPU starts with exactly those CPUs (read back from /proc/self/status by the step
// itself), while CPU steps and `cpuPinning: false` (--cpu-pinning off, GPUPLAN_CPU_PINNING=off)
// keep gpuplan's own CPUs.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cpusToMask,
  loadAffinityControl,
  maskToCpus,
  stepCpus,
} from "../../src/run/step/spawn/cpu-affinity.js";
import { formatCpuList } from "../../src/units/cpu-list.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, tempDir } from "../helpers/cli.js";
import { compileText } from "../helpers/inventory.js";
import { execute, type Harness, twoGpus } from "./helpers/harness.js";
import { warmPlan, workerRecords, workerStep } from "./warm/helpers.js";

const control = await loadAffinityControl();
const allowed = control?.allowed() ?? [];

let h: Harness | undefined;
afterEach(() => {
  h?.cleanup();
  h = undefined;
});

describe("stepCpus and masks", () => {
  it("pins to the union of the step's GPUs' CPUs within the allowed ones; not when unknown, disjoint or everything", () => {
    expect(stepCpus([[0, 1, 2, 3]], [0, 1, 2, 3, 4, 5, 6, 7])).toEqual([0, 1, 2, 3]);
    expect(
      stepCpus(
        [
          [0, 1],
          [6, 7],
        ],
        [0, 1, 2, 3, 4, 5, 6, 7],
      ),
    ).toEqual([0, 1, 6, 7]);
    expect(stepCpus([[0, 1, 8, 9]], [0, 1, 2, 3])).toEqual([0, 1]);
    expect(stepCpus([[0, 1], undefined], [0, 1, 2, 3])).toBeNull();
    expect(stepCpus([[8, 9]], [0, 1, 2, 3])).toBeNull();
    expect(stepCpus([[0, 1, 2, 3]], [0, 1, 2, 3])).toBeNull();
    expect(stepCpus([], [0, 1])).toBeNull();
  });

  it("cpu_set_t masks round-trip", () => {
    expect(maskToCpus(cpusToMask([0, 3, 8, 63, 64, 1023]))).toEqual([0, 3, 8, 63, 64, 1023]);
    expect(cpusToMask([9])[1]).toBe(2);
  });
});

describe.skipIf(allowed.length < 2)("a GPU step starts pinned to its GPU's CPUs", () => {
  const pipeline = `
version: 1
name: pin
registry: { max_pipelines_per_gpu: 2 }
pipelines:
  - name: gpu
    steps:
      - id: s
        run: [grep, Cpus_allowed_list, /proc/self/status]
        memory: torch
        vram: 4GiB
  - name: host
    steps:
      - id: s
        run: [grep, Cpus_allowed_list, /proc/self/status]
        memory: numpy
`;
  const last = allowed.at(-1)!;
  const planWithAffinity = () => {
    const inv = twoGpus();
    for (const gpu of inv.gpus) gpu.cpuAffinity = [last, 4000];
    const { plan } = compileText(pipeline, inv);
    return plan!;
  };
  const seen = (pipelineName: string) =>
    h!.output.find((o) => o.pipeline === pipelineName)?.line.replace(/\s+/g, " ");

  it("the plan carries the GPU's CPUs, the step sees only the allowed ones of them, the start event names them", async () => {
    const plan = planWithAffinity();
    expect(plan.registry.every((r) => r.cpuAffinity?.join() === `${last},4000`)).toBe(true);
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 2, failed: 0 });
    expect(seen("gpu")).toBe(`Cpus_allowed_list: ${last}`);
    expect(seen("host")).toBe(`Cpus_allowed_list: ${formatCpuList(allowed)}`);
    const start = h.events.find((e) => e.event === "gpu.step.start" && e.pipeline === "gpu");
    expect(start && "cpus" in start && start.cpus).toBe(String(last));
    // gpuplan's own thread got its mask back.
    expect(control!.allowed()).toEqual(allowed);
  });

  it("a warm worker starts pinned to its GPU's CPUs too", async () => {
    const plan = warmPlan(workerStep("seg", { key: "k", load: 0 }));
    for (const entry of plan.registry) entry.cpuAffinity = [last];
    h = await execute(plan);
    expect(h.summary).toMatchObject({ ok: 1, failed: 0 });
    const loads = workerRecords(h.dir).filter((r) => r.what === "load");
    expect(loads.map((r) => (r as { cpus?: string }).cpus)).toEqual([String(last)]);
  });

  it("cpuPinning: false leaves the step on every allowed CPU", async () => {
    h = await execute(planWithAffinity(), { cpuPinning: false });
    expect(seen("gpu")).toBe(`Cpus_allowed_list: ${formatCpuList(allowed)}`);
  });

  it("a plan without the GPU's CPUs pins nothing", async () => {
    const { plan } = compileText(pipeline, twoGpus());
    expect(plan!.registry.some((r) => "cpuAffinity" in r)).toBe(false);
    h = await execute(plan!);
    expect(seen("gpu")).toBe(`Cpus_allowed_list: ${formatCpuList(allowed)}`);
  });
});

describe.skipIf(allowed.length < 2 || !fakeLibsBuilt)("end to end through fake NVML", () => {
  it("detect reads the GPU's CPU affinity, compile puts it in the plan, run starts the step pinned", () => {
    const t = tempDir();
    try {
      const cwd = t.dir;
      const last = allowed.at(-1)!;
      const scenario = join(cwd, "one.scenario");
      // The first H100 only, its local CPUs narrowed to this machine's last one.
      writeFileSync(
        scenario,
        `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.count = 1\nnvml.0.affinity = ${last}\n`,
      );
      mkdirSync(join(cwd, "locks"));
      const env = {
        ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
        GPUPLAN_LOCK_DIR: join(cwd, "locks"),
        CI: "1",
      };
      writeFileSync(
        join(cwd, "p.yaml"),
        "version: 1\nname: e2e\npipelines:\n  - name: g\n    steps:\n      - id: s\n        run: [grep, Cpus_allowed_list, /proc/self/status]\n        memory: torch\n        vram: 1GiB\n",
      );
      const compiled = gpuplan(["compile", "p.yaml", "-o", "plan.json"], { cwd, env });
      expect(compiled.exitCode, compiled.stderr).toBe(0);
      const plan = JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8"));
      expect(plan.registry[0].cpuAffinity).toEqual([last]);
      const ran = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd, env });
      expect(ran.exitCode, ran.stderr).toBe(0);
      expect(ran.stderr).toContain(`started on CPUs ${last}`);
      const runs = join(cwd, ".gpuplan", "runs");
      const [run] = readdirSync(runs);
      expect(readFileSync(join(runs, run!, "logs", "g@s.out.log"), "utf8")).toBe(
        `Cpus_allowed_list:\t${last}\n`,
      );
      // Off by the variable or by the flag, resolved by the CLI and handed to the executor.
      for (const [extraEnv, flags] of [
        [{ GPUPLAN_CPU_PINNING: "off" }, []],
        [{}, ["--cpu-pinning", "off"]],
      ] as const) {
        const unpinned = gpuplan(["run", "plan.json", "--ui", "plain", ...flags], {
          cwd,
          env: { ...env, ...extraEnv },
        });
        expect(unpinned.exitCode, unpinned.stderr).toBe(0);
        expect(unpinned.stderr).not.toContain("started on CPUs");
      }
      const bad = gpuplan(["run", "plan.json"], { cwd, env: { ...env, GPUPLAN_CPU_PINNING: "of" } });
      expect(bad.exitCode).toBe(2);
      expect(bad.stderr).toContain("from env 'GPUPLAN_CPU_PINNING' is invalid");
    } finally {
      t.cleanup();
    }
  }, 30_000);
});
