/**
 * One pipeline from start to end: skip what an earlier attempt finished (`--resume`), take its
 * slots and then a permit to run, run its steps one at a time in `needs` order, and on a failure
 * skip the rest. A busy GPU (`--no-wait`) stops the whole run; a slot wait past `--lock-timeout`
 * fails only this pipeline.
 */
import { stepOrder } from "../../plan/step-order.js";
import type { PlannedPipeline, PlannedStep } from "../../schema-types/plan.js";
import { GpuBusyError, LockTimeoutError } from "../lock/types.js";
import type { RunEventOf } from "../record/events.js";
import { stepKey } from "../record/journal.js";
import { journalStep, type PipelineContext } from "./contexts.js";
import { describeHolders, reportLockTimeout } from "./lock-waits.js";
import { PipelinePermit } from "./pipeline-permit.js";
import { givePipelineSlotsBack, type HeldSlot, type HolderFor, takePipelineSlots } from "./pipeline-slots.js";
import { settleStep } from "./settle-step.js";

type SkipCause = RunEventOf<"gpu.step.skip">["cause"];

export async function runPipeline(ctx: PipelineContext, pipeline: PlannedPipeline): Promise<void> {
  const steps = stepOrder(pipeline.steps);
  const todo = steps.filter((s) => !ctx.completed.has(stepKey(pipeline.name, s.id)));
  for (const s of steps)
    if (!todo.includes(s)) skip(ctx, pipeline, s, "completed", "completed in an earlier run");
  if (todo.length === 0 || ctx.stop.aborted) return;

  const held: HeldSlot[] = [];
  const permit = new PipelinePermit(ctx.permits, ctx.stop);
  const holder: HolderFor = (step) => ({
    pid: process.pid,
    run: ctx.run,
    pipeline: pipeline.name,
    step,
    since: new Date().toISOString(),
  });
  // Given back once: as soon as the pipeline's last process has ended (before its journal flush,
  // as its permit is), or at the end whatever happened.
  let givenBack: Promise<void> | null = null;
  const giveSlotsBack = () => {
    givenBack ??= givePipelineSlotsBack(ctx, pipeline, holder, held);
    return givenBack;
  };
  try {
    await takePipelineSlots(ctx, pipeline, holder, held);
    await permit.take();
    for (let i = 0; i < todo.length; i++) {
      const step = todo[i]!;
      if (ctx.stop.aborted) return;
      const last = i === todo.length - 1;
      const end = await settleStep(ctx, { pipeline, step, held, holder, permit, last, giveSlotsBack });
      if (end === "interrupted") return;
      if (end === "failed") {
        for (const later of todo.slice(i + 1)) {
          skip(ctx, pipeline, later, "dependency-failed", `needs ${pipeline.name}/${step.id}, which failed`);
          await journalStep(ctx, pipeline.name, later, {
            status: "skipped",
            attempt: 0,
            device: later.device,
            exitCode: null,
            durationMs: 0,
          });
        }
        return;
      }
    }
  } catch (e) {
    if (e instanceof GpuBusyError) {
      ctx.stopForBusyGpu(e);
    } else if (e instanceof LockTimeoutError) {
      const [first, ...rest] = todo;
      reportLockTimeout(
        ctx,
        pipeline.name,
        first!.id,
        e.gpu,
        e.waitedMs,
        `waited ${e.waitedMs} ms for a slot of ${e.gpu}${describeHolders(e.holders)}; raise --lock-timeout or see gpuplan locks`,
      );
      for (const later of rest) skip(ctx, pipeline, later, "no-slot", `no slot of ${e.gpu}`);
    } else if (!ctx.stop.aborted) {
      throw e;
    }
  } finally {
    permit.giveBack();
    await giveSlotsBack();
  }
}

/** A step that will not run (or need not: an earlier attempt of the run finished it). */
function skip(
  ctx: PipelineContext,
  pipeline: PlannedPipeline,
  step: PlannedStep,
  cause: SkipCause,
  reason: string,
): void {
  ctx.emit({
    event: "gpu.step.skip",
    pipeline: pipeline.name,
    step: step.id,
    device: step.device,
    reason,
    cause,
  });
}
