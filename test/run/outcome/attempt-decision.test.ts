// The one decision about what follows an attempt, as the executor and the run's tally make it.
import { describe, expect, it } from "vitest";
import { attemptPolicy, decideAttempt } from "../../../src/run/outcome/attempt-decision.js";
import type { StepStatus } from "../../../src/run/record/events.js";
import type { PlannedStep } from "../../../src/schema-types/plan.js";

const gpuStep = (retries: number, fallback: "cpu" | null, worker = false) =>
  ({
    gpu: true,
    uuid: "GPU-1",
    onOom: { retries, fallback },
    worker: worker ? { argv: ["w"], key: "k", readyTimeoutMs: 1, args: [] } : null,
  }) as unknown as PlannedStep;
const cpuStep = {
  gpu: false,
  uuid: null,
  onOom: { retries: 3, fallback: "cpu" },
  worker: null,
} as unknown as PlannedStep;

/** Where each attempt runs when every one of them runs out of memory, until the step fails. */
function devicesUntilFailed(step: PlannedStep): string[] {
  const policy = attemptPolicy(step);
  const devices = [policy.gpuAttempts === 0 ? "cpu" : "gpu"];
  const statuses: StepStatus[] = [];
  for (;;) {
    statuses.push("oom");
    const next = decideAttempt(policy, statuses);
    if (next.outcome !== "retry") {
      expect(next.outcome).toBe("failed");
      return devices;
    }
    expect(next).toMatchObject({
      reason: "oom",
      attempt: statuses.length + 1,
      of: policy.gpuAttempts + policy.cpuAttempts,
    });
    devices.push(next.onCpu ? "cpu" : "gpu");
  }
}

describe("attempt decision", () => {
  it.each([
    [gpuStep(0, null), { gpuAttempts: 1, cpuAttempts: 0 }, ["gpu"]],
    [gpuStep(2, null), { gpuAttempts: 3, cpuAttempts: 0 }, ["gpu", "gpu", "gpu"]],
    [gpuStep(1, "cpu"), { gpuAttempts: 2, cpuAttempts: 1 }, ["gpu", "gpu", "cpu"]],
    // A CPU step runs once: a retry fixes no host OOM.
    [cpuStep, { gpuAttempts: 0, cpuAttempts: 1 }, ["cpu"]],
  ])("%o → %o, attempts on %o", (step, policy, devices) => {
    expect(attemptPolicy(step)).toMatchObject(policy);
    expect(devicesUntilFailed(step)).toEqual(devices);
    const total = devices.length;
    if (total > 1) expect(decideAttempt(attemptPolicy(step), ["oom"]).outcome).toBe("retry");
    expect(decideAttempt(attemptPolicy(step), ["error"]).outcome).toBe("failed");
    expect(decideAttempt(attemptPolicy(step), ["timeout"]).outcome).toBe("failed");
    expect(decideAttempt(attemptPolicy(step), ["ok"]).outcome).toBe("ok");
    expect(decideAttempt(attemptPolicy(step), ["interrupted"]).outcome).toBe("interrupted");
    expect(decideAttempt(attemptPolicy(step), ["lock-timeout"]).outcome).toBe("failed");
  });

  it("gives a worker that did not load in time one more try on the same device, without using up an on_oom attempt", () => {
    const policy = attemptPolicy(gpuStep(1, "cpu", true));
    expect(decideAttempt(policy, ["load-timeout"])).toEqual({
      outcome: "retry",
      reason: "load-timeout",
      attempt: 2,
      of: 4,
      onCpu: false,
      rung: null,
      scale: 1,
    });
    // Attempt numbers run ahead of the planned attempts: 3 is the on_oom retry, 4 the CPU fallback.
    expect(decideAttempt(policy, ["load-timeout", "oom"])).toEqual({
      outcome: "retry",
      reason: "oom",
      attempt: 3,
      of: 4,
      onCpu: false,
      rung: { kind: "retry" },
      scale: 1,
    });
    expect(decideAttempt(policy, ["load-timeout", "oom", "oom"])).toMatchObject({ attempt: 4, onCpu: true });
    expect(decideAttempt(policy, ["load-timeout", "oom", "oom", "oom"]).outcome).toBe("failed");
    // Only once.
    expect(decideAttempt(policy, ["load-timeout", "load-timeout"]).outcome).toBe("failed");
    // A plain step has no load to time out.
    expect(decideAttempt(attemptPolicy(gpuStep(1, null)), ["load-timeout"]).outcome).toBe("failed");
  });

  it("walks an on_oom ladder one rung per out-of-memory attempt, the scale shrinking with each smaller rung", () => {
    const step = {
      ...gpuStep(4, "cpu"),
      onOom: {
        retries: 4,
        fallback: "cpu",
        ladder: [
          { kind: "wait", waitMs: 1000 },
          { kind: "exclusive" },
          { kind: "smaller" },
          { kind: "smaller", scale: 0.25 },
          { kind: "cpu" },
        ],
      },
    } as unknown as PlannedStep;
    const policy = attemptPolicy(step);
    expect(policy).toMatchObject({ gpuAttempts: 5, cpuAttempts: 1 });
    const statuses: StepStatus[] = [];
    const walked: [string | undefined, number, boolean][] = [];
    for (;;) {
      statuses.push("oom");
      const next = decideAttempt(policy, statuses);
      if (next.outcome !== "retry") break;
      walked.push([next.rung?.kind, next.scale, next.onCpu]);
    }
    expect(walked).toEqual([
      ["wait", 1, false],
      ["exclusive", 1, false],
      ["smaller", 0.5, false],
      ["smaller", 0.125, false],
      ["cpu", 0.125, true],
    ]);
    // An error is not an OOM: no rung follows it.
    expect(decideAttempt(policy, ["oom", "error"]).outcome).toBe("failed");
  });

  it("needs an attempt to decide about", () => {
    expect(() => decideAttempt(attemptPolicy(cpuStep), [])).toThrow(RangeError);
  });
});
