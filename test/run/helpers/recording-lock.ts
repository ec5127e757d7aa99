/**
 * The real slot lock (OFD locks on the GPU files in `dir`) with a log of
 * every call and the most holders seen per GPU at once, so executor tests can assert slot
 * holding and exclusivity.
 */
import { createSlotLock } from "../../../src/run/lock/index.js";
import type { SlotLease, SlotLock, SlotRequest } from "../../../src/run/lock/types.js";

interface LockCall {
  call: "acquire" | "acquired" | "upgrade" | "upgraded" | "downgrade" | "release";
  gpu: string;
  pipeline: string;
  step: string | null;
  /** What an acquire asked for. */
  request?: Pick<SlotRequest, "reservationBytes" | "budgetBytes" | "wait">;
}

export interface RecordingLock extends SlotLock {
  calls: LockCall[];
  /** Slots held now, per GPU. */
  held: Map<string, number>;
  /** Most slots held at once, per GPU. */
  peak: Map<string, number>;
  /** Most pipelines in the lock at once (asked for a slot and not yet given it back), per GPU. */
  peakAsking: Map<string, number>;
}

export function createRecordingLock(dir: string): RecordingLock {
  const inner = createSlotLock({ dir });
  const calls: LockCall[] = [];
  const held = new Map<string, number>();
  const peak = new Map<string, number>();
  const asking = new Map<string, number>();
  const peakAsking = new Map<string, number>();
  const ask = (gpu: string, by: number) => {
    const now = (asking.get(gpu) ?? 0) + by;
    asking.set(gpu, now);
    peakAsking.set(gpu, Math.max(peakAsking.get(gpu) ?? 0, now));
  };
  // Counted from the lock's own table after every change (an upgrade gives its slot up first).
  const change = async (gpu: string) => {
    const now = (await inner.inspect()).filter((s) => s.gpu === gpu && s.held).length;
    held.set(gpu, now);
    peak.set(gpu, Math.max(peak.get(gpu) ?? 0, now));
  };
  return {
    dir: inner.dir,
    calls,
    held,
    peak,
    peakAsking,
    inspect: () => inner.inspect(),
    async acquire(request) {
      const who = { gpu: request.gpu, pipeline: request.holder.pipeline };
      const { reservationBytes, budgetBytes, wait } = request;
      calls.push({ call: "acquire", ...who, step: null, request: { reservationBytes, budgetBytes, wait } });
      ask(request.gpu, 1);
      const lease = await inner.acquire(request).catch((e: unknown) => {
        ask(request.gpu, -1);
        throw e;
      });
      calls.push({ call: "acquired", ...who, step: null });
      await change(request.gpu);
      let step: string | null = null;
      const wrapped: SlotLease = {
        uuid: lease.uuid,
        gpu: lease.gpu,
        get slots() {
          return lease.slots;
        },
        get fds() {
          return lease.fds;
        },
        setHolder(h) {
          step = h.step;
          lease.setHolder(h);
        },
        async upgrade(options) {
          calls.push({ call: "upgrade", ...who, step });
          await lease.upgrade(options);
          await change(request.gpu);
          calls.push({ call: "upgraded", ...who, step });
        },
        downgrade() {
          lease.downgrade();
          void change(request.gpu);
          calls.push({ call: "downgrade", ...who, step });
        },
        release() {
          if (lease.fds.length > 0) ask(request.gpu, -1);
          lease.release();
          void change(request.gpu);
          calls.push({ call: "release", ...who, step });
        },
      };
      return wrapped;
    },
  };
}
