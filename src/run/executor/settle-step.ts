/**
 * One step of a running pipeline, to its end: the exclusive upgrade when it asks for its GPUs
 * alone, then attempts until one settles it. What follows each attempt (done, another one on the
 * GPU or the CPU, failed) is outcome/attempt-decision.ts's call, the one the run's tally makes too.
 */
import type { PlannedPipeline, PlannedStep } from "../../schema-types/plan.js";
import { GpuBusyError, LockTimeoutError } from "../lock/types.js";
import { type AttemptDecision, attemptPolicy, decideAttempt } from "../outcome/attempt-decision.js";
import type { StepStatus } from "../record/events.js";
import { stepKey } from "../record/journal.js";
import type { PipelineContext } from "./contexts.js";
import { ExclusiveUpgrade } from "./exclusive-upgrade.js";
import { describeHolders, reportLockTimeout } from "./lock-waits.js";
import { OomLadder, type Placement } from "./oom-ladder.js";
import type { PipelinePermit } from "./pipeline-permit.js";
import type { HeldSlot, HolderFor } from "./pipeline-slots.js";
import { runAttempt } from "./run-attempt.js";

/** A step with what its pipeline holds while it runs. */
export interface StepInPipeline {
  pipeline: PlannedPipeline;
  step: PlannedStep;
  held: readonly HeldSlot[];
  holder: HolderFor;
  permit: PipelinePermit;
  /** No step of the pipeline comes after this one. */
  last: boolean;
  /** The step after this one runs on the GPU: the pipeline keeps its slots for it. */
  gpuNext?: boolean;
  /** Give the pipeline's GPU slots back (the step's last process has ended and no GPU step follows). */
  giveSlotsBack?: () => Promise<void>;
}

/** How a step ended for its pipeline: done, failed (the rest is skipped), or stopped with the run. */
export type StepEnd = "ok" | "failed" | "interrupted";

export async function settleStep(ctx: PipelineContext, s: StepInPipeline): Promise<StepEnd> {
  const { pipeline, step, held } = s;
  for (const { lease } of held) lease.setHolder(s.holder(step.id));
  const exclusive = new ExclusiveUpgrade(ctx, pipeline, step);
  try {
    if (step.exclusive && step.gpu && step.uuid !== null) await exclusive.upgrade(held);
    // Once the pipeline's last process has ended, its permit goes to the next pipeline at once,
    // before this step's journal entry reaches the disk (that flush still comes before the step
    // is reported done): with short steps the flush would otherwise idle every lane.
    // Its GPU slots go too, and go whenever no GPU step follows this one: with GPU pipelines the
    // slots, not the permits, are what the next pipeline (of this run or another) waits for.
    const lastProcessEnded = (pipelineDone: boolean) => {
      if (pipelineDone) s.permit.giveBack();
      if (pipelineDone || !s.gpuNext) s.giveSlotsBack?.().catch(() => undefined);
    };
    return await runAttempts(ctx, s, new OomLadder(ctx, s, exclusive), lastProcessEnded);
  } catch (e) {
    if (e instanceof LockTimeoutError) {
      const hint = `the exclusive step waited ${e.waitedMs} ms for every slot of ${e.gpu}${describeHolders(e.holders)}`;
      reportLockTimeout(ctx, pipeline.name, step.id, step.device, e.waitedMs, hint);
      return "failed";
    }
    if (ctx.stop.aborted && !(e instanceof GpuBusyError)) return "interrupted";
    throw e;
  } finally {
    exclusive.downgrade();
  }
}

async function runAttempts(
  ctx: PipelineContext,
  s: StepInPipeline,
  ladder: OomLadder,
  lastProcessEnded: (pipelineDone: boolean) => void,
): Promise<StepEnd> {
  const { pipeline, step } = s;
  const policy = attemptPolicy(step);
  const statuses: StepStatus[] = [];
  // A resumed step's attempts are new ones: numbered after every attempt earlier sessions made
  // (log names, events, journal), so nothing of an interrupted attempt is taken for this one's.
  const before = ctx.earlierAttempts.get(stepKey(pipeline.name, step.id)) ?? 0;
  let onCpu = policy.gpuAttempts === 0;
  let scale = 1;
  let at: Placement = { pipeline, step, leases: s.held.map(({ lease }) => lease) };
  try {
    for (;;) {
      let decision: AttemptDecision | undefined;
      const decide = (status: StepStatus): AttemptDecision => {
        decision ??= decideAttempt(policy, [...statuses, status]);
        return decision;
      };
      const status = await runAttempt(ctx, {
        pipeline: at.pipeline,
        step: at.step,
        attempt: before + statuses.length + 1,
        onCpu,
        leases: at.leases,
        oomScale: scale,
        onEnded: (ended) => {
          // No attempt follows: the step's (and maybe the pipeline's) last process has ended.
          const next = decide(ended);
          if (next.outcome === "retry" && !ctx.stop.aborted) return;
          lastProcessEnded(next.outcome !== "ok" || s.last);
        },
      });
      const next = decide(status);
      statuses.push(status);
      if (next.outcome !== "retry") return next.outcome;
      // A retry that the stop cancels leaves the step unsettled, as an interrupt does.
      if (ctx.stop.aborted) return "interrupted";
      // The rung goes in place first (a wait, the whole GPU, another GPU): the event says what it did.
      const placed =
        next.reason === "oom" && next.rung && !next.onCpu
          ? await ladder.apply(next.rung, at)
          : { placement: at, report: {} };
      if (ctx.stop.aborted) return "interrupted";
      const { report } = placed;
      at = placed.placement;
      const device = next.onCpu ? "cpu" : at.step.device;
      ctx.emit({
        event: "gpu.step.retry",
        pipeline: pipeline.name,
        step: step.id,
        device,
        attempt: before + next.attempt,
        of: before + next.of,
        reason: next.reason,
        ...(next.onCpu && !onCpu
          ? { nextDevice: "cpu" }
          : report.nextDevice && { nextDevice: report.nextDevice }),
        ...(next.rung && { rung: next.rung.kind }),
        scale: next.scale,
        ...(report.waitedMs !== undefined && { waitedMs: report.waitedMs }),
        ...(report.freeBytes !== undefined && { freeBytes: report.freeBytes }),
        ...(report.note && { note: report.note }),
      });
      onCpu = next.onCpu;
      scale = next.scale;
    }
  } finally {
    ladder.release();
  }
}
