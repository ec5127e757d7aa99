/**
 * A pipeline's permit to run on the host: one of the plan's `settings.maxParallelPipelines`.
 * Whoever holds GPU slots holds a permit too and is running a step: a pipeline that gets its
 * slots but no permit gives the slots back before it waits (pipeline-slots.ts). So a permit
 * holder may wait for a slot (the holders will finish), and a run with fewer permits than slots
 * cannot deadlock.
 */
import type { Semaphore } from "./semaphore.js";

export class PipelinePermit {
  private release: (() => void) | undefined;

  constructor(
    private readonly permits: Semaphore,
    private readonly signal: AbortSignal,
  ) {}

  /** Wait for a permit, unless the pipeline holds one already. */
  async take(): Promise<void> {
    if (this.release) return;
    this.release = await this.permits.acquire(this.signal);
  }

  /** Take a permit only if one is free now; whether the pipeline holds one. */
  tryTake(): boolean {
    this.release ??= this.permits.tryAcquire() ?? undefined;
    return this.release !== undefined;
  }

  /** Idempotent: the pipeline gives it back when its last process ends, and again when it ends. */
  giveBack(): void {
    this.release?.();
    this.release = undefined;
  }
}
