/**
 * A run summed up from its events alone: steps ok, failed and skipped, the failures with what a
 * person needs, and how the run ended. The executor folds every event it emits into a tally and
 * returns its summary; the views fold the same events into theirs (ui/run/reduce-run-state.ts),
 * so the counters on screen, the summary printed at the end and the `run.summary` line are one
 * computation. Whether an attempt is a step's last is attempt-decision.ts's call, as in the executor.
 */
import type { PlannedPipeline } from "../../schema-types/plan.js";
import type { OverReservation, RunSummaryEvent, StepFailure } from "../../schema-types/run-events.js";
import type { RunEvent, RunEventOf, StepStatus } from "../record/events.js";
import { type AttemptPolicy, attemptPolicy, decideAttempt } from "./attempt-decision.js";

export type { StepFailure } from "../../schema-types/run-events.js";

/** What a run gives back: the `run.summary` line (schemas/run-events.schema.json) without its event fields. */
export type RunSummary = Omit<RunSummaryEvent, "ts" | "event" | "pipeline" | "step" | "device">;

export interface RunTally {
  run: string;
  runDir: string;
  ok: number;
  failed: number;
  skipped: number;
  failures: readonly StepFailure[];
  /** Attempts that held more VRAM than their reservation, in order. */
  overReservations: readonly OverReservation[];
  /** The statuses of the attempts of steps that are not settled yet, by tallyKey. */
  unsettled: Readonly<Record<string, readonly StepStatus[]>>;
  end: RunEventOf<"run.end"> | null;
  /** Each selected step's attempt policy, by tallyKey (constant through the run). */
  policies: ReadonlyMap<string, AttemptPolicy>;
}

const tallyKey = (pipeline: string, step: string): string => `${pipeline}\u0000${step}`;

/** A step the plan does not list (it cannot happen in a run): one attempt, like a CPU step. */
const ONE_ATTEMPT: AttemptPolicy = { gpuAttempts: 0, cpuAttempts: 1, loadTimeoutRetries: 0, rungs: [] };

/** Nothing happened yet; `run` and `runDir` come with run.start. */
export function createTally(pipelines: readonly PlannedPipeline[], run = "", runDir = ""): RunTally {
  const policies = new Map<string, AttemptPolicy>();
  for (const p of pipelines) for (const s of p.steps) policies.set(tallyKey(p.name, s.id), attemptPolicy(s));
  return {
    run,
    runDir,
    ok: 0,
    failed: 0,
    skipped: 0,
    failures: [],
    overReservations: [],
    unsettled: {},
    end: null,
    policies,
  };
}

/** The tally after one more event. Pure: `tally` is never changed. */
export function tallyEvent(tally: RunTally, event: RunEvent): RunTally {
  switch (event.event) {
    case "run.start":
      return { ...tally, run: event.run, runDir: event.runDir };
    case "run.end":
      return { ...tally, end: event };
    case "gpu.step.skip":
      // A step an earlier attempt of the run finished is done: it counts as ok, as the journal has it.
      return event.cause === "completed"
        ? { ...tally, ok: tally.ok + 1 }
        : { ...tally, skipped: tally.skipped + 1 };
    case "gpu.step.end":
      return onStepEnd(tally, event);
    case "gpu.step.over_reservation": {
      const { pipeline, step, device, attempt, peakVramBytes, reservationBytes } = event;
      const over = { pipeline, step, device, attempt, peakVramBytes, reservationBytes };
      return { ...tally, overReservations: [...tally.overReservations, over] };
    }
    default:
      return tally;
  }
}

function onStepEnd(tally: RunTally, event: RunEventOf<"gpu.step.end">): RunTally {
  const key = tallyKey(event.pipeline, event.step);
  const statuses = [...(tally.unsettled[key] ?? []), event.status];
  const decision = decideAttempt(tally.policies.get(key) ?? ONE_ATTEMPT, statuses);
  const { [key]: _settled, ...unsettled } = tally.unsettled;
  switch (decision.outcome) {
    case "retry":
      return { ...tally, unsettled: { ...tally.unsettled, [key]: statuses } };
    case "ok":
      return { ...tally, unsettled, ok: tally.ok + 1 };
    case "interrupted":
      return { ...tally, unsettled };
    case "failed":
      return {
        ...tally,
        unsettled,
        failed: tally.failed + 1,
        failures: [...tally.failures, failureOf(event)],
      };
  }
}

function failureOf(event: RunEventOf<"gpu.step.end">): StepFailure {
  return {
    pipeline: event.pipeline,
    step: event.step,
    device: event.device,
    status: event.status,
    exitCode: event.exitCode,
    signal: event.signal,
    stderrTail: event.stderrTail ?? [],
    // No log when the step never started (its slot wait timed out).
    logPath: event.logPath ?? "",
    ...(event.stderrPath !== undefined && { stderrPath: event.stderrPath }),
    hint: event.hint ?? null,
  };
}

/** The summary so far; a run without its run.end (it broke off) reads as not interrupted, 0 ms long. */
export function summarize(tally: RunTally): RunSummary {
  return {
    run: tally.run,
    runDir: tally.runDir,
    ok: tally.ok,
    failed: tally.failed,
    skipped: tally.skipped,
    interrupted: tally.end?.status === "interrupted",
    durationMs: tally.end?.durationMs ?? 0,
    failures: [...tally.failures],
    ...(tally.overReservations.length > 0 && { overReservations: [...tally.overReservations] }),
  };
}
