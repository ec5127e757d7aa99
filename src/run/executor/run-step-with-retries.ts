/**
 * One step of a running pipeline, to its final status: the exclusive upgrade when it asks for
 * its GPUs alone, then attempts until one settles it — OOM retries (the last ones on the CPU
 * when the step allows) and one more try for a warm worker that did not load in time.
 */
import type { PlannedPipeline, PlannedStep } from "../../schema-types/plan.js";
import { GpuBusyError, LockTimeoutError, type SlotLease } from "../lock/types.js";
import type { StepStatus } from "../record/events.js";
import { isGpuStep, planAttempts, runsOnCpu, willRetry } from "./attempts.js";
import { ExclusiveUpgrade } from "./exclusive-upgrade.js";
import type { HostWorker } from "./host-worker.js";
import { describeHolders } from "./lock-waits.js";
import type { HeldSlot, HolderFor } from "./pipeline-slots.js";
import { runAttempt } from "./run-attempt.js";
import type { RunContext } from "./run-context.js";

/** A step with what its pipeline holds while it runs. */
export interface PipelineStep {
  pipeline: PlannedPipeline;
  step: PlannedStep;
  held: readonly HeldSlot[];
  holder: HolderFor;
  worker: HostWorker;
  /** No step of the pipeline comes after this one. */
  last: boolean;
}

export async function runStepWithRetries(ctx: RunContext, s: PipelineStep): Promise<StepStatus> {
  const { pipeline, step, held } = s;
  for (const { lease } of held) lease.setHolder(s.holder(step.id));
  const exclusive = new ExclusiveUpgrade(ctx, pipeline, step);
  try {
    if (step.exclusive && isGpuStep(step)) await exclusive.upgrade(held, s.worker);
    // Once the pipeline's last process has ended, its host worker goes to the next pipeline at
    // once, before this step's journal entry reaches the disk (that flush still comes before the
    // step is reported done): with short steps the flush would otherwise idle every lane.
    const lastProcessEnded = () => {
      s.worker.giveBack();
    };
    return await runAttempts(
      ctx,
      pipeline,
      step,
      held.map(({ lease }) => lease),
      (status) => status !== "ok" || s.last,
      lastProcessEnded,
    );
  } catch (e) {
    if (e instanceof LockTimeoutError) {
      const hint = `the exclusive step waited ${e.waitedMs} ms for every slot of ${e.gpu}${describeHolders(e.holders)}`;
      ctx.recordLockTimeout(pipeline.name, step.id, step.device, e.waitedMs, hint);
      return "error";
    }
    if (ctx.stopSignal.aborted && !(e instanceof GpuBusyError)) return "interrupted";
    throw e;
  } finally {
    exclusive.downgrade();
  }
}

async function runAttempts(
  ctx: RunContext,
  pipeline: PlannedPipeline,
  step: PlannedStep,
  leases: readonly SlotLease[],
  endsPipeline: (status: StepStatus) => boolean,
  lastProcessEnded: () => void,
): Promise<StepStatus> {
  const { total } = planAttempts(step);
  // A worker that does not load in time gets one more try (like sparkle_motion's
  // ModelLoadTimeoutError); it does not use up an on_oom attempt, so log numbers run ahead.
  let loadRetry = step.worker !== null;
  let extra = 0;
  for (let planned = 1; planned <= total; planned++) {
    const attempt = planned + extra;
    const onCpu = runsOnCpu(step, planned);
    const status = await runAttempt(ctx, {
      pipeline,
      step,
      attempt,
      planned,
      onCpu,
      leases,
      loadRetry,
      onSettled: (settled) => {
        if (endsPipeline(settled)) lastProcessEnded();
      },
    });
    if (status === "load-timeout" && loadRetry && !ctx.stopSignal.aborted) {
      loadRetry = false;
      extra++;
      planned--;
      ctx.emit({
        event: "gpu.step.retry",
        pipeline: pipeline.name,
        step: step.id,
        device: onCpu ? "cpu" : step.device,
        attempt: attempt + 1,
        of: total + extra,
        reason: "load-timeout",
      });
      continue;
    }
    if (!willRetry(step, planned, status) || ctx.stopSignal.aborted) return status;
    const nextOnCpu = runsOnCpu(step, planned + 1);
    ctx.emit({
      event: "gpu.step.retry",
      pipeline: pipeline.name,
      step: step.id,
      device: nextOnCpu ? "cpu" : step.device,
      attempt: attempt + 1,
      of: total + extra,
      reason: "oom",
      ...(nextOnCpu && { nextDevice: "cpu" }),
    });
  }
  return "error";
}
