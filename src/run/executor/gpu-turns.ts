/**
 * A run's turns at each GPU's lock: at most as many of its pipelines ask the lock for a GPU at
 * once as the GPU has slots. One process never holds more slots of a GPU than that, so a pipeline
 * beyond them could only wait — and waiting in the lock costs: each waiter opens the GPU's lock
 * file, joins the lock's queue and is polled at every release (500 one-step pipelines on a
 * two-slot GPU put 498 waiters there at once, ~70 ms before the first step could start). Here it
 * waits in arrival order, holding nothing; the lock's own order across processes is unchanged, and
 * this run now joins the lock's line one pipeline at a time, after another process's waiters
 * rather than ahead of all of them.
 */
import type { PlanRegistryEntry } from "../../schema-types/plan.js";
import { Semaphore } from "./semaphore.js";

export class GpuTurns {
  private readonly gates = new Map<string, Semaphore>();

  /** Wait for a turn at the GPU's lock; resolves with the function that ends it (idempotent). */
  take(entry: PlanRegistryEntry, signal: AbortSignal): Promise<() => void> {
    let gate = this.gates.get(entry.uuid);
    if (!gate) {
      gate = new Semaphore(Math.max(1, entry.maxPipelines));
      this.gates.set(entry.uuid, gate);
    }
    return gate.acquire(signal);
  }
}
