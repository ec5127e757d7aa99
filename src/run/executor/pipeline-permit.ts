/**
 * A pipeline's permit to run on the host: one of the plan's `settings.maxParallelPipelines`.
 * It is let go while an exclusive step waits for the rest of its GPU, which is what keeps a run
 * with fewer permits than slots from deadlocking.
 */
import type { Semaphore } from "./semaphore.js";

export class PipelinePermit {
  private release: (() => void) | undefined;

  constructor(
    private readonly permits: Semaphore,
    private readonly signal: AbortSignal,
  ) {}

  async take(): Promise<void> {
    this.release = await this.permits.acquire(this.signal);
  }

  /**
   * While an exclusive step waits for the rest of its GPU it runs nothing, so it gives its
   * permit back: a pipeline that holds a slot and waits for a permit could otherwise wait
   * for this one, which waits for that slot (a deadlock when permits < slots). A pipeline
   * that holds a permit is therefore always running a step, and every slot wait ends.
   */
  async whileWaiting<T>(wait: () => Promise<T>): Promise<T> {
    this.release?.();
    this.release = undefined;
    try {
      return await wait();
    } finally {
      this.release = await this.permits.acquire(this.signal);
    }
  }

  /** Idempotent: the pipeline gives it back when its last process ends, and again when it ends. */
  giveBack(): void {
    this.release?.();
    this.release = undefined;
  }
}
