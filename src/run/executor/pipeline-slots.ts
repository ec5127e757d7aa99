/**
 * A pipeline's slot leases: one slot of each of its GPUs, taken in UUID order (the same order in
 * every gpuplan process, so two multi-GPU pipelines never hold one card each and wait for the
 * other's), and given back, in reverse, as soon as no GPU step of the pipeline runs or is ready to
 * run — before a CPU step, and at its end. The next GPU step takes them again, on the same GPUs
 * (affinity is the plan's), in the lock's line like everyone else (#12 item 13).
 */
import type { PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../../schema-types/plan.js";
import type { HolderInfo, SlotLease, SlotRequest } from "../lock/types.js";
import { reservationBytes } from "../outcome/reservation.js";
import type { PipelineContext } from "./contexts.js";
import { announceWait, holdersOf, registryEntries } from "./lock-waits.js";
import type { PipelinePermit } from "./pipeline-permit.js";

export interface HeldSlot {
  entry: PlanRegistryEntry;
  lease: SlotLease;
  /** Ends the pipeline's turn at the GPU's lock (gpu-turns.ts), once the lease is given back. */
  endTurn?: () => void;
}

/** Who holds a pipeline's slots, as `gpuplan locks` shows it; `step` null while none runs yet. */
export type HolderFor = (step: string | null) => HolderInfo;

/**
 * What the pipeline asks the lock for on one GPU, wherever it asks (its own GPUs, a slot another
 * GPU lends an on_oom rung): its reservation, the budget pipelines share there (the GPU's budget
 * less what is kept for warm workers, as compile planned it), and what others hold there.
 */
export function slotRequest(
  ctx: PipelineContext,
  pipeline: PlannedPipeline,
  entry: PlanRegistryEntry,
  holder: HolderInfo,
  wait: boolean,
): SlotRequest {
  const { foreign } = ctx;
  return {
    uuid: entry.uuid,
    gpu: entry.gpu,
    maxPipelines: entry.maxPipelines,
    reservationBytes: reservationBytes(pipeline) ?? 0,
    budgetBytes: Math.max(0, entry.memoryBudgetBytes - (entry.warmReserveBytes ?? 0)),
    ...(foreign && { foreignBytes: () => foreign.of(entry.uuid) }),
    holder,
    wait,
    ...(ctx.lockTimeoutMs !== undefined && { timeoutMs: ctx.lockTimeoutMs }),
    signal: ctx.stop,
  };
}

/** A step that needs its pipeline's GPU slots while it runs: one placed on a GPU. */
export function runsOnGpu(step: PlannedStep): boolean {
  return step.device !== "cpu" && step.uuid !== null;
}

export class PipelineSlots {
  /** The leases held now (empty between GPU steps that a CPU step separates). */
  held: HeldSlot[] = [];
  private givingBack: Promise<void> | null = null;

  constructor(
    private readonly ctx: PipelineContext,
    private readonly pipeline: PlannedPipeline,
    private readonly holder: HolderFor,
  ) {}

  /**
   * The pipeline's slots and a permit to run, for a GPU step, never holding one while waiting for
   * the other: the slots are waited for with no permit held (a busy GPU stops no CPU step); a
   * permit not free at once sends the slots back while the pipeline waits for one (a host lane
   * full of CPU steps keeps no GPU from other processes). Only then, holding the permit, does it
   * wait for the slots again: slot holders always run, so that wait ends, and it holds up nothing
   * but this run's own next step.
   */
  async takeWithPermit(permit: PipelinePermit, step: string): Promise<void> {
    if (this.held.length > 0) return permit.take();
    permit.giveBack();
    await this.take(step);
    if (permit.tryTake()) return;
    await this.giveBack();
    await permit.take();
    await this.take(step);
  }

  /**
   * Take a slot of each of the pipeline's GPUs for `step`, the GPU step about to run (named in
   * the lock file from the start, so the step's own start writes nothing more there); pushed into
   * `held` as each comes, so that a failed wait gives back what was taken.
   */
  async take(step: string): Promise<void> {
    const { ctx, pipeline } = this;
    await this.givingBack;
    if (this.held.length > 0) return;
    const held = this.held;
    // Admission counts what others hold: known before the first slot is taken.
    await ctx.foreign?.ready();
    for (const entry of registryEntries(ctx.plan, pipeline)) {
      const waitStart = performance.now();
      // The lock queues this process's waiters first come, first served. `--lock-timeout` and
      // `--no-wait` are about other processes' slots: the run's own pipelines queue behind each
      // other (in its turns) as without them, or a plan with more pipelines than a GPU has slots
      // could never run under --no-wait (exit 75 naming this very run) nor --lock-timeout 0, and
      // under --lock-timeout 10m one whose queue is longer would fail its own later pipelines.
      const { lease, endTurn } = await announceWait(this.acquireInTurn(entry, step), async () => {
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
      });
      held.push({ entry, lease, ...(endTurn && { endTurn }) });
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

  /**
   * A slot of the entry's GPU, asked for in the run's turn (gpu-turns.ts). Under `--no-wait` and
   * `--lock-timeout` too: both are about other processes, which the pipeline in turn finds in its
   * way as soon as it asks, so the lock times a wait from the turn, not from the wait behind the
   * run's own pipelines; without turns every queued pipeline of the run polled the lock (1,000
   * one-step pipelines on a two-slot GPU: 84 s instead of ~8).
   */
  private async acquireInTurn(
    entry: PlanRegistryEntry,
    step: string,
  ): Promise<{ lease: SlotLease; endTurn?: () => void }> {
    const { ctx, pipeline, holder } = this;
    const endTurn = await ctx.turns.take(entry, ctx.stop);
    try {
      const lease = await ctx.slots.acquire(slotRequest(ctx, pipeline, entry, holder(step), ctx.wait));
      return { lease, endTurn };
    } catch (e) {
      endTurn?.();
      throw e;
    }
  }

  /** Give back (or keep for warm workers) every lease held, last taken first; one give-back at a time. */
  giveBack(): Promise<void> {
    if (this.givingBack) return this.givingBack;
    if (this.held.length === 0) return Promise.resolve();
    const leases = this.held.reverse();
    this.held = [];
    this.givingBack = this.release(leases).finally(() => {
      this.givingBack = null;
    });
    return this.givingBack;
  }

  private async release(leases: HeldSlot[]): Promise<void> {
    const { ctx, pipeline, holder } = this;
    for (const { entry, lease, endTurn } of leases) {
      const slots = [...lease.slots];
      await ctx.slots.giveBack(lease, holder(null)).finally(endTurn);
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
}
