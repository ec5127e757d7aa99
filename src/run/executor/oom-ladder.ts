/**
 * The executor's side of an `on_oom` ladder: putting a rung in place before its attempt. Which
 * rung comes next is outcome/attempt-decision.ts's call; here it is acted on:
 * - wait: read the step's GPU until it has the step's reservation free (or more than when the
 *   step failed, without a reservation), up to the rung's duration;
 * - exclusive: the whole GPU (exclusive-upgrade.ts), and its whole budget in the step's
 *   framework settings, for this attempt and the ones after;
 * - other-gpu: the GPU of the run with the most free memory (more than the step's own has, and
 *   its reservation where it has one), same backend; on a multi-GPU pipeline one of the
 *   pipeline's own GPUs, elsewhere one whose slot is free at once (never waiting for a slot
 *   while holding one: two such waits could deadlock); none found, the step stays;
 * - smaller: nothing to do here (GPUPLAN_OOM_SCALE comes from the decision);
 * - retry and cpu: nothing either.
 * What could not be done is said in the retry event's `note`; the attempt still runs.
 */
import type { PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../../schema-types/plan.js";
import { GpuBusyError, type SlotLease } from "../lock/types.js";
import { setLongTimeout } from "../long-timeout.js";
import type { OomRung } from "../outcome/attempt-decision.js";
import { reservationBytes } from "../outcome/reservation.js";
import type { GpuMemory } from "../record/memory-snapshot.js";
import type { PipelineContext } from "./contexts.js";
import type { ExclusiveUpgrade } from "./exclusive-upgrade.js";
import { slotRequest } from "./pipeline-slots.js";
import type { StepInPipeline } from "./settle-step.js";

/** Where and how the next attempt runs. */
export interface Placement {
  /** The pipeline as the attempt sees it: a step moved off a one-GPU pipeline's GPU sees the new one only. */
  pipeline: PlannedPipeline;
  /** The step as the attempt sees it: its device, UUID and memory budget may differ from the plan's. */
  step: PlannedStep;
  leases: readonly SlotLease[];
}

/** What the rung did, for the retry event. */
export interface RungReport {
  nextDevice?: string;
  waitedMs?: number;
  freeBytes?: number | null;
  note?: string;
}

/** How long a wait rung waits for free memory unless it says. */
const DEFAULT_WAIT_MS = 5 * 60_000;
/** How often a wait rung reads free memory. */
const WAIT_POLL_MS = 500;

export class OomLadder {
  /** Slots taken on other GPUs by other-gpu rungs: given back when the step is settled. */
  private readonly borrowed: SlotLease[] = [];
  private exclusiveTaken = false;

  constructor(
    private readonly ctx: PipelineContext,
    private readonly s: StepInPipeline,
    private readonly exclusive: ExclusiveUpgrade,
  ) {}

  /** Put `rung` in place for the next attempt, which runs on the GPU (CPU attempts need nothing). */
  async apply(rung: OomRung, at: Placement): Promise<{ placement: Placement; report: RungReport }> {
    switch (rung.kind) {
      case "wait":
        return { placement: at, report: await this.waitForMemory(rung, at.step) };
      case "exclusive":
        return this.takeWholeGpu(at);
      case "other-gpu":
        return this.moveToAnotherGpu(at);
      default:
        return { placement: at, report: {} };
    }
  }

  /** Give back what other-gpu rungs took. */
  release(): void {
    for (const lease of this.borrowed.splice(0)) lease.release();
  }

  private async waitForMemory(rung: OomRung, step: PlannedStep): Promise<RungReport> {
    const started = performance.now();
    const limit = rung.waitMs ?? DEFAULT_WAIT_MS;
    const sampler = this.ctx.sampler;
    const free = async () => freeOf(await sampler?.gpus(), step.uuid);
    const before = await free();
    if (before === null) {
      // Nothing says when memory frees up: wait the rung's own duration, if it gave one.
      await this.sleep(rung.waitMs ?? 0);
      return {
        waitedMs: Math.round(performance.now() - started),
        freeBytes: null,
        note: "no reading of the GPU's free memory: waited the rung's duration",
      };
    }
    const need = reservationBytes(this.s.pipeline);
    const enough = (bytes: number) => (need !== null ? bytes >= need : bytes > before);
    let now = before;
    while (!enough(now) && performance.now() - started < limit && !this.ctx.stop.aborted) {
      await this.sleep(Math.min(WAIT_POLL_MS, limit - (performance.now() - started)));
      now = (await free()) ?? now;
    }
    return {
      waitedMs: Math.round(performance.now() - started),
      freeBytes: now,
      ...(!enough(now) && { note: `the GPU did not free enough memory within ${limit} ms` }),
    };
  }

  private async takeWholeGpu(at: Placement): Promise<{ placement: Placement; report: RungReport }> {
    const { ctx, s } = this;
    const moved = at.step.uuid !== s.step.uuid;
    if (moved) {
      // The slot borrowed on another GPU is one of many there: the whole of that GPU is not ours to take.
      return {
        placement: at,
        report: { note: "the step runs on a borrowed slot of another GPU: not upgraded" },
      };
    }
    if (!this.exclusiveTaken && !s.step.exclusive) {
      await this.exclusive.upgrade(s.held);
      this.exclusiveTaken = true;
    }
    const entry = ctx.registry.find((r) => r.uuid === at.step.uuid);
    const step = entry ? { ...at.step, memoryBudgetBytes: entry.memoryBudgetBytes } : at.step;
    return { placement: { ...at, step }, report: {} };
  }

  private async moveToAnotherGpu(at: Placement): Promise<{ placement: Placement; report: RungReport }> {
    const { ctx, s } = this;
    const readings = await ctx.sampler?.gpus();
    const own = freeOf(readings, at.step.uuid);
    if (!readings || own === null)
      return { placement: at, report: { note: "no reading of free memory: stayed on its GPU" } };
    const need = reservationBytes(s.pipeline) ?? 0;
    const current = ctx.registry.find((r) => r.uuid === at.step.uuid);
    const inPipeline = s.pipeline.gpus.length > 1;
    const candidates = ctx.registry
      .filter((r) => r.uuid !== at.step.uuid && r.backend === current?.backend)
      .filter((r) => !inPipeline || s.pipeline.gpus.includes(r.gpu))
      .map((r) => ({ entry: r, free: freeOf(readings, r.uuid) }))
      .filter(
        (c): c is { entry: PlanRegistryEntry; free: number } =>
          c.free !== null && c.free > own && c.free >= need,
      )
      .sort((a, b) => b.free - a.free);
    for (const { entry, free } of candidates) {
      const lease = inPipeline
        ? s.held.find((h) => h.entry.uuid === entry.uuid)?.lease
        : await this.trySlot(entry);
      if (!lease) continue;
      const step = { ...at.step, device: entry.gpu, uuid: entry.uuid };
      const gpus = inPipeline
        ? at.pipeline.gpus
        : at.pipeline.gpus.map((g) => (g === at.step.device ? entry.gpu : g));
      return {
        placement: {
          pipeline: { ...at.pipeline, gpus },
          step,
          leases: inPipeline ? at.leases : [lease],
        },
        report: { nextDevice: entry.gpu, freeBytes: free },
      };
    }
    return {
      placement: at,
      report: {
        freeBytes: own,
        note: "no other GPU of the run had more free memory and a free slot: stayed on its GPU",
      },
    };
  }

  /** A slot of `entry` if one is free now (never a wait while this pipeline holds its own). */
  private async trySlot(entry: PlanRegistryEntry): Promise<SlotLease | null> {
    try {
      // Reserved like any slot of the pipeline: a borrowed slot is no way around the budget.
      const lease = await this.ctx.slots.acquire(
        slotRequest(this.ctx, this.s.pipeline, entry, this.s.holder(this.s.step.id), false),
      );
      this.borrowed.push(lease);
      return lease;
    } catch (e) {
      if (e instanceof GpuBusyError) return null;
      throw e;
    }
  }

  private sleep(ms: number): Promise<void> {
    if (ms <= 0 || this.ctx.stop.aborted) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        timer.clear();
        this.ctx.stop.removeEventListener("abort", done);
        resolve();
      };
      const timer = setLongTimeout(done, ms);
      this.ctx.stop.addEventListener("abort", done, { once: true });
    });
  }
}

/** A GPU's free bytes in a reading; null when unknown. */
function freeOf(readings: readonly GpuMemory[] | null | undefined, uuid: string | null): number | null {
  const g = readings?.find((r) => r.uuid === uuid);
  if (!g) return null;
  return g.freeBytes ?? (g.usedBytes !== null ? g.totalBytes - g.usedBytes : null);
}
