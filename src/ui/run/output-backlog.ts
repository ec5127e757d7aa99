/**
 * How much of the steps' output the plain view lets wait for a slow reader of stderr (an ssh
 * session, a CI log collector, a pipe nobody reads yet). Node queues what a pipe does not take at
 * once, in memory and without limit: a step printing 200 MiB while the reader lagged made gpuplan
 * hold all of it (600 MiB resident). Past the limit, step output lines are left out of the view —
 * never the run's own lines (starts, ends, failures), and never the logs, which have every line —
 * and once the reader has caught up the view says how many it left out. A slow terminal must not
 * slow the steps down either, so the lines are dropped rather than the steps held back, as
 * Docker's non-blocking log mode does with its buffer.
 */

/** Step output may wait for stderr up to this much; what comes beyond it is counted, not queued. */
export const MAX_WAITING_OUTPUT = 4 * 1024 * 1024;
/**
 * Once lines are left out, they are until the reader is down to this share of the limit: whole
 * stretches left out, not every other line.
 */
const RESUME_SHARE = 1 / 4;
/** The note of lines left out comes at most this often (and at the end), however often the reader lags. */
const NOTE_EVERY_MS = 5000;

export interface OutputBacklog {
  /** Whether a step output line may be queued now; false counts it as left out. */
  admit(): boolean;
  /**
   * Lines left out since the note before, when a note is due (the reader has caught up and the last
   * note is old enough), else 0; `atEnd`: all of them (the view's last words wait for the reader anyway).
   */
  takeUnshown(atEnd?: boolean): number;
}

/** `waiting()`: what the stream holds that its reader has not taken (writableLength). */
export function createOutputBacklog(
  waiting: () => number,
  // Monotonic: a wall clock stepped back (NTP) held every note back until it caught up again.
  now: () => number = () => performance.now(),
  limit = MAX_WAITING_OUTPUT,
): OutputBacklog {
  let unshown = 0;
  let dropping = false;
  let lastNote = -Infinity;
  return {
    admit() {
      const held = waiting();
      dropping = dropping ? held > limit * RESUME_SHARE : held >= limit;
      if (!dropping) return true;
      unshown++;
      return false;
    },
    takeUnshown(atEnd = false) {
      if (unshown === 0) return 0;
      if (!atEnd && (dropping || now() - lastNote < NOTE_EVERY_MS)) return 0;
      lastNote = now();
      const n = unshown;
      unshown = 0;
      return n;
    },
  };
}
