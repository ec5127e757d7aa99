/**
 * A FIFO counting semaphore whose waits can be aborted: the bound on the pipelines running at
 * once on the host (pipeline-permit.ts).
 */

/** FIFO counting semaphore. */
export class Semaphore {
  private readonly waiters: { resolve: () => void; reject: (e: unknown) => void }[] = [];
  constructor(private free: number) {}

  /** Resolves with a release function; rejects with the signal's reason when aborted first. */
  async acquire(signal?: AbortSignal): Promise<() => void> {
    signal?.throwIfAborted();
    if (this.free > 0 && this.waiters.length === 0) {
      this.free--;
      return this.releaser();
    }
    await new Promise<void>((resolve, reject) => {
      const waiter = {
        resolve: () => {
          signal?.removeEventListener("abort", onAbort);
          resolve();
        },
        reject,
      };
      const onAbort = () => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener("abort", onAbort, { once: true });
      this.waiters.push(waiter);
    });
    return this.releaser();
  }

  /** A release function when a unit is free now (and nobody waits for one), else null. */
  tryAcquire(): (() => void) | null {
    if (this.free === 0 || this.waiters.length > 0) return null;
    this.free--;
    return this.releaser();
  }

  private releaser(): () => void {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.waiters.shift();
      // Hand the unit straight to the next waiter, so nobody can overtake it.
      if (next) next.resolve();
      else this.free++;
    };
  }
}
