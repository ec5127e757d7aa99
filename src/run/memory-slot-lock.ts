/**
 * A SlotLock that lives in one process: the same slot semantics as the flock-based lock
 * (maxPipelines slots per GPU, an exclusive upgrade gives its slot up and waits for all of them,
 * writers first), but nothing is shared with other processes and `fds` is empty. The executor's
 * unit tests use it; the CLI hands it to runs whose pipelines are all on the CPU (nothing to lock,
 * so koffi is never loaded).
 */
import {
  GpuBusyError,
  type HolderInfo,
  LockTimeoutError,
  type SlotLease,
  type SlotLock,
  type SlotRequest,
  type SlotState,
} from "./lock/types.js";

interface GpuSlots {
  gpu: string;
  holders: (HolderInfo | null)[];
  /** Callbacks re-checking their condition whenever a slot is freed. */
  waiters: Set<() => void>;
  /** Exclusive upgrades waiting: new shared acquires queue behind them. */
  upgrading: number;
}

export function createMemorySlotLock(dir = "(in-process)"): SlotLock {
  const gpus = new Map<string, GpuSlots>();
  const slotsOf = (uuid: string, gpu: string, max: number): GpuSlots => {
    let s = gpus.get(uuid);
    if (!s) {
      s = { gpu, holders: Array.from({ length: max }, () => null), waiters: new Set(), upgrading: 0 };
      gpus.set(uuid, s);
    }
    return s;
  };
  const wake = (s: GpuSlots) => {
    for (const w of [...s.waiters]) w();
  };
  /** Waits until `ready()`, then runs `claim()` in the same tick, so no other waiter can take it first. */
  const waitFor = (
    s: GpuSlots,
    ready: () => boolean,
    claim: () => void,
    options: { wait: boolean; timeoutMs?: number; signal?: AbortSignal },
  ): Promise<void> => {
    if (ready()) {
      claim();
      return Promise.resolve();
    }
    const held = () => s.holders.filter((h): h is HolderInfo => h !== null);
    if (!options.wait) return Promise.reject(new GpuBusyError(s.gpu, held()));
    const started = performance.now();
    return new Promise((resolve, reject) => {
      const done = () => {
        s.waiters.delete(check);
        clearTimeout(timer);
        options.signal?.removeEventListener("abort", onAbort);
      };
      const check = () => {
        if (!ready()) return;
        claim();
        done();
        resolve();
      };
      const onAbort = () => {
        done();
        reject(options.signal?.reason ?? new Error("aborted"));
      };
      const timer =
        options.timeoutMs !== undefined
          ? setTimeout(() => {
              done();
              reject(new LockTimeoutError(s.gpu, Math.round(performance.now() - started), held()));
            }, options.timeoutMs)
          : undefined;
      options.signal?.addEventListener("abort", onAbort, { once: true });
      s.waiters.add(check);
    });
  };

  return {
    dir,
    async acquire(request: SlotRequest): Promise<SlotLease> {
      const s = slotsOf(request.uuid, request.gpu, request.maxPipelines);
      let mine: number[] = [];
      await waitFor(
        s,
        () => s.upgrading === 0 && s.holders.includes(null),
        () => {
          const first = s.holders.indexOf(null);
          s.holders[first] = request.holder;
          mine = [first];
        },
        request,
      );
      let holder = request.holder;
      let released = false;
      return {
        uuid: request.uuid,
        gpu: request.gpu,
        get slots() {
          return mine;
        },
        fds: [],
        setHolder(h) {
          holder = h;
          for (const n of mine) s.holders[n] = h;
        },
        async upgrade(options) {
          // Like the flock lock, an upgrader may hold nothing while it waits: two holders that both
          // upgrade would otherwise wait for each other forever.
          for (const n of mine) s.holders[n] = null;
          mine = [];
          wake(s);
          s.upgrading++;
          try {
            await waitFor(
              s,
              () => s.holders.every((h) => h === null),
              () => {
                mine = s.holders.map((_, n) => n);
                for (const n of mine) s.holders[n] = holder;
              },
              options,
            );
          } catch (e) {
            // Failed or cancelled: take one slot back when one is free.
            const free = s.holders.indexOf(null);
            if (free >= 0) {
              s.holders[free] = holder;
              mine = [free];
            }
            throw e;
          } finally {
            s.upgrading--;
            // A finished upgrade no longer holds shared acquirers back.
            wake(s);
          }
        },
        downgrade() {
          const [keep, ...rest] = mine;
          for (const n of rest) s.holders[n] = null;
          mine = keep === undefined ? [] : [keep];
          wake(s);
        },
        release() {
          if (released) return;
          released = true;
          for (const n of mine) s.holders[n] = null;
          mine = [];
          wake(s);
        },
      };
    },
    async inspect(): Promise<SlotState[]> {
      return [...gpus].flatMap(([uuid, s]) =>
        s.holders.map((holder, slot) => ({ uuid, gpu: s.gpu, slot, held: holder !== null, holder })),
      );
    },
  };
}
