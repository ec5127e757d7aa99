/**
 * SIGINT, SIGTERM, SIGHUP and SIGQUIT while a run is on. The first signal is forwarded to the
 * running steps, which get a grace period before SIGKILL; a second one means the user has decided
 * not to wait, and kills them now. SIGHUP is what a closed terminal or a dropped ssh connection
 * sends, SIGQUIT what Ctrl-\ does: left to their default, either killed gpuplan on the spot, its
 * steps orphaned holding their GPU slots and the run's end never recorded.
 */

/** The signals that stop a run (each ends it with 128 + its number). */
export const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT"] as const;

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
  for (const signal of STOP_SIGNALS) process.on(signal, onSignal);
  return {
    interrupt: interrupt.signal,
    killNow: killNow.signal,
    received: () => received,
    dispose() {
      for (const signal of STOP_SIGNALS) process.off(signal, onSignal);
    },
  };
}
