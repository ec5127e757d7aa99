/**
 * Scheduling primitives: a counting semaphore whose waits can be aborted (the workers bound),
 * and the topological order of a pipeline's steps.
 */
import type { PlannedStep } from "../../schema-types/plan.js";

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

/**
 * Steps in an order that honours `needs`, keeping the file's order among ready steps (Kahn).
 * Needs naming no step of the pipeline are ignored (compile reports them); a cycle keeps the
 * remaining steps in file order (compile rejects cycles, so a plan never has one).
 */
export function topologicalOrder(steps: readonly PlannedStep[]): PlannedStep[] {
  const ids = new Set(steps.map((s) => s.id));
  const done = new Set<string>();
  const order: PlannedStep[] = [];
  const remaining = [...steps];
  while (remaining.length > 0) {
    const i = remaining.findIndex((s) => s.needs.every((n) => done.has(n) || !ids.has(n)));
    const [next] = remaining.splice(i >= 0 ? i : 0, 1);
    order.push(next!);
    done.add(next!.id);
  }
  return order;
}
