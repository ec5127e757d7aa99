/**
 * A pipeline's hold on one of the host's workers (`settings.workers`, the bound on pipelines
 * running at once; not a warm worker). It is let go while an exclusive step waits for the rest of
 * its GPU, which is what keeps a run with fewer workers than slots from deadlocking.
 */
import type { Semaphore } from "./scheduler.js";

export class HostWorker {
  private release: (() => void) | undefined;

  constructor(
    private readonly workers: Semaphore,
    private readonly signal: AbortSignal,
  ) {}

  async take(): Promise<void> {
    this.release = await this.workers.acquire(this.signal);
  }

  /**
   * While an exclusive step waits for the rest of its GPU it runs nothing, so it gives its
   * worker back: a pipeline that holds a slot and waits for a worker could otherwise wait
   * for this one, which waits for that slot (a deadlock when workers < slots). A pipeline
   * that holds a worker is therefore always running a step, and every slot wait ends.
   */
  async whileWaiting<T>(wait: () => Promise<T>): Promise<T> {
    this.release?.();
    this.release = undefined;
    try {
      return await wait();
    } finally {
      this.release = await this.workers.acquire(this.signal);
    }
  }

  /** Idempotent: the pipeline gives it back when its last process ends, and again when it ends. */
  giveBack(): void {
    this.release?.();
    this.release = undefined;
  }
}
