/**
 * What follows an attempt of a step: the step is done (ok), it gets another attempt (an OOM with
 * `on_oom.retries` left, the last of them on the CPU with `on_oom.fallback: cpu`; a warm worker
 * that did not load in time, once), it failed, or the run was interrupted under it. Decided here
 * and only here, from the step's plan and the statuses of its attempts so far, so that the
 * executor (which acts on it) and the run's tally (which the summary and the views are made of)
 * can never disagree.
 */
import type { PlannedStep } from "../../schema-types/plan.js";
import type { StepStatus } from "../record/events.js";

/** The attempts a step may have, from its plan. */
export interface AttemptPolicy {
  /** Attempts on the step's GPU: 1 + on_oom.retries (0 for a CPU step). */
  gpuAttempts: number;
  /** Attempts on the CPU after those: 1 for a CPU step or an on_oom CPU fallback, else 0. */
  cpuAttempts: number;
  /** Extra tries for a warm worker that did not load in time; they use up no on_oom attempt. */
  loadTimeoutRetries: number;
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
    };

/** A step runs on its GPU when the plan gave it one (CPU steps run once: a retry fixes no host OOM). */
const isGpuStep = (step: PlannedStep): boolean => step.gpu && step.uuid !== null;

export function attemptPolicy(step: PlannedStep): AttemptPolicy {
  const loadTimeoutRetries = step.worker !== null ? 1 : 0;
  if (!isGpuStep(step)) return { gpuAttempts: 0, cpuAttempts: 1, loadTimeoutRetries };
  return {
    gpuAttempts: 1 + step.onOom.retries,
    cpuAttempts: step.onOom.fallback === "cpu" ? 1 : 0,
    loadTimeoutRetries,
  };
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
      };
    }
    default:
      return { outcome: "failed" };
  }
}
