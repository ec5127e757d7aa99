/**
 * The waiters of one GPU inside this process, first come first served, and the timer that polls
 * for them. Only the head of this queue stands in the GPU's line across processes (a ticket in
 * the lock file), so two processes' pipelines alternate instead of one process's whole batch
 * going first. Lock files have no notification and a blocking F_OFD_SETLKW would
 * stall the event loop, so waiting is polling: every 2 ms at first, backing off by half up to
 * 25 ms while nothing changes. A release in this process re-polls at once (setImmediate); a
 * release in another process (or the kernel freeing a dead step's lock) is seen within one period.
 */

const MIN_POLL_MS = 2;
const MAX_POLL_MS = 25;

export interface Waiter {
  /** One try; true once the waiter has settled (it is then dropped). `head`: first in this process's queue. */
  poll(now: number, head: boolean): boolean;
}

export class GpuQueue {
  private readonly waiters: Waiter[] = [];
  private pending: { cancel(): void } | undefined;
  private delay = MIN_POLL_MS;

  get idle(): boolean {
    return this.waiters.length === 0;
  }

  add(waiter: Waiter): void {
    this.waiters.push(waiter);
    this.schedule(this.delay);
  }

  /** Drop a waiter that gave up (abort); the next one may be able to go now. */
  remove(waiter: Waiter): void {
    const i = this.waiters.indexOf(waiter);
    if (i === -1) return;
    this.waiters.splice(i, 1);
    if (i === 0) this.kick();
  }

  /** Something was freed in this process: poll now instead of at the next period. */
  kick(): void {
    if (this.idle) return;
    this.pending?.cancel();
    this.delay = MIN_POLL_MS;
    const immediate = setImmediate(() => this.tick());
    this.pending = { cancel: () => clearImmediate(immediate) };
  }

  private tick(): void {
    this.pending = undefined;
    const now = performance.now();
    let progressed = false;
    for (let i = 0; i < this.waiters.length; ) {
      if (this.waiters[i]!.poll(now, i === 0)) {
        this.waiters.splice(i, 1);
        progressed = true;
      } else i++;
    }
    this.delay = progressed ? MIN_POLL_MS : Math.min(MAX_POLL_MS, Math.ceil(this.delay * 1.5));
    this.schedule(this.delay);
  }

  private schedule(delay: number): void {
    if (this.idle || this.pending) return;
    const timer = setTimeout(() => this.tick(), delay);
    this.pending = { cancel: () => clearTimeout(timer) };
  }
}
