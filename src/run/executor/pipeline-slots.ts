/**
 * A pipeline's slot leases: one slot of each of its GPUs, taken in UUID order before its first
 * step (the same order in every gpuplan process, so two multi-GPU pipelines never hold one card
 * each and wait for the other's), and given back, in reverse, after its last.
 */
import type { PlannedPipeline, PlanRegistryEntry } from "../../schema-types/plan.js";
import type { HolderInfo, SlotLease } from "../lock/types.js";
import type { PipelineContext } from "./contexts.js";
import { announceWait, holdersOf, registryEntries } from "./lock-waits.js";
import { reservationOf } from "./reservation.js";

export interface HeldSlot {
  entry: PlanRegistryEntry;
  lease: SlotLease;
}

/** Who holds a pipeline's slots, as `gpuplan locks` shows it; `step` null between steps. */
export type HolderFor = (step: string | null) => HolderInfo;

/**
 * Take a slot of each of the pipeline's GPUs, pushing each lease into `held` as it comes, so that
 * the caller gives back what was taken even when a later wait fails.
 */
export async function takePipelineSlots(
  ctx: PipelineContext,
  pipeline: PlannedPipeline,
  holder: HolderFor,
  held: HeldSlot[],
): Promise<void> {
  for (const entry of registryEntries(ctx.plan, pipeline)) {
    const waitStart = performance.now();
    // The lock queues this process's waiters first come, first served; `--lock-timeout` and
    // `--no-wait` apply to in-process and cross-process contention alike.
    const lease = await announceWait(
      ctx.slots.acquire({
        uuid: entry.uuid,
        gpu: entry.gpu,
        maxPipelines: entry.maxPipelines,
        reservationBytes: reservationOf(pipeline, entry),
        budgetBytes: entry.memoryBudgetBytes,
        holder: holder(null),
        wait: ctx.wait,
        ...(ctx.lockTimeoutMs !== undefined && { timeoutMs: ctx.lockTimeoutMs }),
        signal: ctx.stop,
      }),
      async () => {
        // Who holds the slots, for the view; looked up only when there is a wait.
        const holders = await holdersOf(ctx.lock, entry.uuid);
        if (!held.some((l) => l.entry === entry))
          ctx.emit({
            event: "gpu.lock.wait",
            pipeline: pipeline.name,
            step: null,
            device: entry.gpu,
            gpu: entry.gpu,
            slots: 1,
            exclusive: false,
            holders,
          });
      },
    );
    held.push({ entry, lease });
    ctx.emit({
      event: "gpu.lock.acquired",
      pipeline: pipeline.name,
      step: null,
      device: entry.gpu,
      gpu: entry.gpu,
      slots: [...lease.slots],
      waitedMs: Math.round(performance.now() - waitStart),
      exclusive: false,
    });
  }
}

/** Give back (or keep for warm workers) every lease taken, last taken first. */
export async function givePipelineSlotsBack(
  ctx: PipelineContext,
  pipeline: PlannedPipeline,
  holder: HolderFor,
  held: HeldSlot[],
): Promise<void> {
  for (const { entry, lease } of held.reverse()) {
    const slots = [...lease.slots];
    await ctx.slots.giveBack(lease, holder(null));
    ctx.emit({
      event: "gpu.lock.released",
      pipeline: pipeline.name,
      step: null,
      device: entry.gpu,
      gpu: entry.gpu,
      slots,
      exclusive: false,
    });
  }
}
