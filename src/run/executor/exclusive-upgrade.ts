/**
 * An exclusive step has its GPUs to itself: before it runs, every lease of its pipeline is
 * upgraded to all slots of its GPU (the GPU's warm workers are evicted first, since they hold
 * slots and memory there), and afterwards downgraded back to the one slot the pipeline holds.
 */
import type { PlannedPipeline, PlannedStep } from "../../schema-types/plan.js";
import type { SlotLease } from "../lock/types.js";
import type { PipelineContext } from "./contexts.js";
import { announceWait } from "./lock-waits.js";
import type { HeldSlot } from "./pipeline-slots.js";

export class ExclusiveUpgrade {
  private upgraded: SlotLease[] = [];
  private claimed: string[] = [];

  constructor(
    private readonly ctx: PipelineContext,
    private readonly pipeline: PlannedPipeline,
    private readonly step: PlannedStep,
  ) {}

  /**
   * Every slot of each held GPU, one GPU after the other; what was upgraded is remembered for
   * downgrade(). The pipeline keeps its permit while it waits: every other holder of the GPU's
   * slots holds a permit too and is running a step (a pipeline that gets a slot but no permit
   * gives the slot straight back, pipeline-slots.ts), so the wait ends.
   */
  async upgrade(held: readonly HeldSlot[]): Promise<void> {
    const { ctx, pipeline, step } = this;
    for (const { entry, lease } of held) {
      const waitStart = performance.now();
      // Warm workers hold slots (and VRAM) of this GPU: the card is this step's alone.
      ctx.slots.beginExclusive(lease.uuid);
      this.claimed.push(lease.uuid);
      await ctx.pool.evictGpu(lease.uuid, "replacement");
      // Always waits (bounded by --lock-timeout): --no-wait is about starting on a busy GPU;
      // once running, the other holders are often this run's own pipelines, which will finish.
      await announceWait(
        lease.upgrade({
          wait: true,
          ...(ctx.lockTimeoutMs !== undefined && { timeoutMs: ctx.lockTimeoutMs }),
          signal: ctx.stop,
        }),
        () =>
          ctx.emit({
            event: "gpu.lock.wait",
            pipeline: pipeline.name,
            step: step.id,
            device: entry.gpu,
            gpu: entry.gpu,
            slots: entry.maxPipelines,
            exclusive: true,
          }),
      );
      this.upgraded.push(lease);
      ctx.emit({
        event: "gpu.lock.acquired",
        pipeline: pipeline.name,
        step: step.id,
        device: entry.gpu,
        gpu: entry.gpu,
        slots: [...lease.slots],
        waitedMs: Math.round(performance.now() - waitStart),
        exclusive: true,
      });
    }
  }

  /** Back to one slot per GPU; safe to call after a failed or partial upgrade, or none. */
  downgrade(): void {
    const { ctx, pipeline, step } = this;
    for (const uuid of this.claimed) ctx.slots.endExclusive(uuid);
    for (const lease of this.upgraded) {
      const before = [...lease.slots];
      lease.downgrade();
      const kept = new Set(lease.slots);
      const given = before.filter((n) => !kept.has(n));
      // A one-slot GPU gives nothing back (and an empty list would read as "all of them").
      if (given.length > 0) {
        ctx.emit({
          event: "gpu.lock.released",
          pipeline: pipeline.name,
          step: step.id,
          device: lease.gpu,
          gpu: lease.gpu,
          slots: given,
          exclusive: true,
        });
      }
    }
    this.claimed = [];
    this.upgraded = [];
  }
}
