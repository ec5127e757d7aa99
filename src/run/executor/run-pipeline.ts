/**
 * One pipeline from start to end: skip what an earlier attempt finished (`--resume`), take its
 * slots and then a host worker, run its steps one at a time in `needs` order, and on a failure
 * skip the rest. A busy GPU (`--no-wait`) stops the whole run; a slot wait past `--lock-timeout`
 * fails only this pipeline.
 */
import type { PlannedPipeline } from "../../schema-types/plan.js";
import { GpuBusyError, LockTimeoutError } from "../lock/types.js";
import { stepKey } from "../record/journal.js";
import { HostWorker } from "./host-worker.js";
import { describeHolders } from "./lock-waits.js";
import { givePipelineSlotsBack, type HeldSlot, type HolderFor, takePipelineSlots } from "./pipeline-slots.js";
import type { RunContext } from "./run-context.js";
import { runStepWithRetries } from "./run-step-with-retries.js";
import { topologicalOrder } from "./scheduler.js";

export async function runPipeline(ctx: RunContext, pipeline: PlannedPipeline): Promise<void> {
  const steps = topologicalOrder(pipeline.steps);
  const todo = steps.filter((s) => !ctx.options.completed?.has(stepKey(pipeline.name, s.id)));
  for (const s of steps) {
    if (todo.includes(s)) continue;
    ctx.skip(pipeline.name, s, "completed", "completed in an earlier run");
  }
  if (todo.length === 0 || ctx.stopSignal.aborted) return;

  const held: HeldSlot[] = [];
  const worker = new HostWorker(ctx.workers, ctx.stopSignal);
  const holder: HolderFor = (step) => ({
    pid: process.pid,
    run: ctx.run,
    pipeline: pipeline.name,
    step,
    since: new Date().toISOString(),
  });
  try {
    await takePipelineSlots(ctx, pipeline, holder, held);
    await worker.take();
    for (let i = 0; i < todo.length; i++) {
      const step = todo[i]!;
      if (ctx.stopSignal.aborted) return;
      const last = i === todo.length - 1;
      const status = await runStepWithRetries(ctx, { pipeline, step, held, holder, worker, last });
      if (status === "interrupted") return;
      if (status !== "ok") {
        for (const later of todo.slice(i + 1)) {
          ctx.skip(
            pipeline.name,
            later,
            "dependency-failed",
            `needs ${pipeline.name}/${step.id}, which failed`,
          );
          await ctx.journalStep(pipeline.name, later, "skipped", 0, later.device, null, 0);
        }
        return;
      }
    }
  } catch (e) {
    if (e instanceof GpuBusyError) {
      ctx.stopForBusyGpu(e);
    } else if (e instanceof LockTimeoutError) {
      const [first, ...rest] = todo;
      ctx.recordLockTimeout(
        pipeline.name,
        first!.id,
        e.gpu,
        e.waitedMs,
        `waited ${e.waitedMs} ms for a slot of ${e.gpu}${describeHolders(e.holders)}; raise --lock-timeout or see gpuplan locks`,
      );
      for (const later of rest) ctx.skip(pipeline.name, later, "no-slot", `no slot of ${e.gpu}`);
    } else if (!ctx.stopSignal.aborted) {
      throw e;
    }
  } finally {
    worker.giveBack();
    await givePipelineSlotsBack(ctx, pipeline, holder, held);
  }
}
