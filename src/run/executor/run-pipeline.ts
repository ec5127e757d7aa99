/**
 * One pipeline from start to end: skip what an earlier attempt finished (`--resume`), run its
 * steps one at a time in `needs` order — each with a permit to run, and a GPU step with its
 * pipeline's GPU slots, which are given back whenever no GPU step follows — and on a failure skip
 * the rest. A busy GPU (`--no-wait`) stops the whole run; a slot wait past `--lock-timeout`
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
import { type HolderFor, PipelineSlots, runsOnGpu } from "./pipeline-slots.js";
import { settleStep } from "./settle-step.js";

type SkipCause = RunEventOf<"gpu.step.skip">["cause"];

export async function runPipeline(ctx: PipelineContext, pipeline: PlannedPipeline): Promise<void> {
  const steps = stepOrder(pipeline.steps);
  const todo = steps.filter((s) => !ctx.completed.has(stepKey(pipeline.name, s.id)));
  for (const s of steps)
    if (!todo.includes(s)) skip(ctx, pipeline, s, "completed", "completed in an earlier run");
  if (todo.length === 0 || ctx.stop.aborted) return;

  const permit = new PipelinePermit(ctx.permits, ctx.stop);
  const holder: HolderFor = (step) => ({
    pid: process.pid,
    run: ctx.run,
    pipeline: pipeline.name,
    step,
    since: new Date().toISOString(),
  });
  // Held only while a GPU step runs or is about to: given back as soon as the process of a GPU
  // step that no GPU step follows has ended (before its journal flush, as the permit is at the
  // end), before a CPU step in any case, and at the end whatever happened.
  const slots = new PipelineSlots(ctx, pipeline, holder);
  const giveSlotsBack = () => slots.giveBack();
  // The step whose slots are being taken: a GPU step after a CPU step takes them again, so a
  // slot wait past --lock-timeout is this step's, not the pipeline's first.
  let at = 0;
  try {
    for (let i = 0; i < todo.length; i++) {
      at = i;
      const step = todo[i]!;
      if (ctx.stop.aborted) return;
      if (runsOnGpu(step)) await slots.takeWithPermit(permit, step.id);
      else {
        await slots.giveBack();
        await permit.take();
      }
      const last = i === todo.length - 1;
      const next = todo[i + 1];
      const end = await settleStep(ctx, {
        pipeline,
        step,
        held: slots.held,
        holder,
        permit,
        last,
        gpuNext: next !== undefined && runsOnGpu(next),
        giveSlotsBack,
      });
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
      const [waiting, ...rest] = todo.slice(at);
      reportLockTimeout(
        ctx,
        pipeline.name,
        waiting!.id,
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
