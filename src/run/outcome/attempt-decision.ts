/**
 * What follows an attempt of a step: the step is done (ok), it gets another attempt (an OOM with
 * a rung of its `on_oom` ladder left — `retries` plain retries then the CPU with `fallback: cpu`,
 * or the ladder the file wrote: wait, exclusive, other-gpu, smaller, cpu; a warm worker that did
 * not load in time, once), it failed, or the run was interrupted under it. Decided here and only
 * here, from the step's plan and the statuses of its attempts so far, so that the executor (which
 * acts on it) and the run's tally (which the summary and the views are made of) can never disagree.
 */
import type { OomRung, PlannedStep } from "../../schema-types/plan.js";
import type { StepStatus } from "../record/events.js";

export type { OomRung } from "../../schema-types/plan.js";

/** The attempts a step may have, from its plan. */
export interface AttemptPolicy {
  /** Attempts on the step's GPU: 1 + its GPU rungs (0 for a CPU step). */
  gpuAttempts: number;
  /** Attempts on the CPU after those: 1 for a CPU step or a ladder that ends on the CPU, else 0. */
  cpuAttempts: number;
  /** Extra tries for a warm worker that did not load in time; they use up no on_oom attempt. */
  loadTimeoutRetries: number;
  /** What each attempt after the first is, in order (the on_oom ladder; empty for a CPU step). */
  rungs: readonly OomRung[];
}

export type AttemptDecision =
  | { outcome: "ok" }
  | { outcome: "failed" }
  /** Not an outcome: the step did not fail, and --resume runs it again. */
  | { outcome: "interrupted" }
  | {
      outcome: "retry";
      reason: "oom" | "load-timeout";
      /** The next attempt's number (log names, events) and the attempts the step may now have. */
      attempt: number;
      of: number;
      onCpu: boolean;
      /** The ladder's rung the next attempt is (the same as the last for a load-timeout retry; null for the first). */
      rung: OomRung | null;
      /** GPUPLAN_OOM_SCALE for the next attempt: the product of the `smaller` rungs up to it. */
      scale: number;
    };

/** A step runs on its GPU when the plan gave it one (CPU steps run once: a retry fixes no host OOM). */
const isGpuStep = (step: PlannedStep): boolean => step.gpu && step.uuid !== null;

/** The smaller rung's factor unless the file gave one. */
const DEFAULT_SCALE = 0.5;

export function attemptPolicy(step: PlannedStep): AttemptPolicy {
  const loadTimeoutRetries = step.worker !== null ? 1 : 0;
  if (!isGpuStep(step)) return { gpuAttempts: 0, cpuAttempts: 1, loadTimeoutRetries, rungs: [] };
  const rungs: readonly OomRung[] = step.onOom.ladder ?? [
    ...Array.from({ length: step.onOom.retries }, () => ({ kind: "retry" as const })),
    ...(step.onOom.fallback === "cpu" ? [{ kind: "cpu" as const }] : []),
  ];
  const cpuAttempts = rungs.at(-1)?.kind === "cpu" ? 1 : 0;
  return { gpuAttempts: 1 + rungs.length - cpuAttempts, cpuAttempts, loadTimeoutRetries, rungs };
}

/** The rung of the planned attempt `n` (1-based; the first attempt has none) and its OOM scale. */
function rungOf(policy: AttemptPolicy, n: number): { rung: OomRung | null; scale: number } {
  let scale = 1;
  for (const r of policy.rungs.slice(0, Math.max(0, n - 1)))
    if (r.kind === "smaller") scale *= r.scale ?? DEFAULT_SCALE;
  return { rung: n > 1 ? (policy.rungs[n - 2] ?? null) : null, scale };
}

/**
 * What follows the last of `statuses`, the statuses of every attempt of the step so far in order
 * (a `lock-timeout` counts as one: the step never started, and is not retried).
 */
export function decideAttempt(policy: AttemptPolicy, statuses: readonly StepStatus[]): AttemptDecision {
  const last = statuses.at(-1);
  if (last === undefined) throw new RangeError("decideAttempt needs the status of at least one attempt");
  // Replay the earlier attempts: which planned attempt was the last, and load retries left.
  let planned = 0;
  let loadRetriesLeft = policy.loadTimeoutRetries;
  for (const status of statuses.slice(0, -1)) {
    if (status === "load-timeout" && loadRetriesLeft > 0) loadRetriesLeft--;
    else planned++;
  }
  const total = policy.gpuAttempts + policy.cpuAttempts;
  const extras = policy.loadTimeoutRetries - loadRetriesLeft;
  switch (last) {
    case "ok":
      return { outcome: "ok" };
    case "interrupted":
      return { outcome: "interrupted" };
    case "load-timeout":
      if (loadRetriesLeft > 0) {
        // The same planned attempt again, on the same device.
        return {
          outcome: "retry",
          reason: "load-timeout",
          attempt: statuses.length + 1,
          of: total + extras + 1,
          onCpu: planned + 1 > policy.gpuAttempts,
          ...rungOf(policy, planned + 1),
        };
      }
      return { outcome: "failed" };
    case "oom": {
      const next = planned + 2;
      if (next > total) return { outcome: "failed" };
      return {
        outcome: "retry",
        reason: "oom",
        attempt: statuses.length + 1,
        of: total + extras,
        onCpu: next > policy.gpuAttempts,
        ...rungOf(policy, next),
      };
    }
    default:
      return { outcome: "failed" };
  }
}
