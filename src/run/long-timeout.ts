/**
 * `setTimeout` for any delay a user can write. Node fires a delay past 2^31−1 ms (~24.8 days)
 * after 1 ms with a TimeoutOverflowWarning, so a step with `timeout: 30d` was killed at once; this
 * waits in steps of at most that long instead, counting on the monotonic clock: a wall clock
 * stepped forward (NTP, a VM resumed from a snapshot) must not end a 30-day timeout early.
 */
const MAX_DELAY_MS = 2 ** 31 - 1;

export interface LongTimeout {
  /** Never fires once cleared. */
  clear(): void;
  /** Does not keep the process alive (as Timeout.unref). */
  unref(): LongTimeout;
}

export function setLongTimeout(fn: () => void, ms: number): LongTimeout {
  const due = performance.now() + ms;
  let timer: NodeJS.Timeout | undefined;
  let referenced = true;
  const arm = (delay: number) => {
    timer = setTimeout(
      () => {
        const left = due - performance.now();
        if (left > 0 && delay === MAX_DELAY_MS) arm(Math.min(left, MAX_DELAY_MS));
        else fn();
      },
      Math.max(0, delay),
    );
    if (!referenced) timer.unref();
  };
  arm(Math.min(ms, MAX_DELAY_MS));
  const handle: LongTimeout = {
    clear: () => clearTimeout(timer),
    unref: () => {
      referenced = false;
      timer?.unref();
      return handle;
    },
  };
  return handle;
}
