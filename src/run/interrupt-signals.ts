/**
 * SIGINT and SIGTERM while a run is on. The first signal is forwarded to the running steps, which
 * get a grace period before SIGKILL; a second one means the user has decided not to wait, and
 * kills them now.
 */

export interface InterruptSignals {
  /** Aborted at the first signal. */
  interrupt: AbortSignal;
  /** Aborted at the second. */
  killNow: AbortSignal;
  /** The first signal received (SIGINT until one is). */
  received(): NodeJS.Signals;
  /** Stop listening; the default handlers apply again. */
  dispose(): void;
}

export function listenForInterrupts(): InterruptSignals {
  const interrupt = new AbortController();
  const killNow = new AbortController();
  let received: NodeJS.Signals = "SIGINT";
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) {
      killNow.abort();
      return;
    }
    received = signal;
    interrupt.abort(new Error(`interrupted by ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  return {
    interrupt: interrupt.signal,
    killNow: killNow.signal,
    received: () => received,
    dispose() {
      process.off("SIGINT", onSignal);
      process.off("SIGTERM", onSignal);
    },
  };
}
