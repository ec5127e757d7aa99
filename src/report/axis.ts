/**
 * The report's time axis: a run's sessions (the first run and each `--resume`) one after the
 * other. A pause between sessions longer than a few percent of the work is cut to that much and
 * marked, so that a run resumed the next morning does not shrink its work to a sliver.
 */

export interface Session {
  /** Epoch ms of its run.start. */
  startMs: number;
  /** Epoch ms of its run.end, or of its last event when it never ended. */
  endMs: number;
  ended: boolean;
}

export interface Axis {
  /** Axis ms of an epoch-ms time in session `i`. */
  at(session: number, epochMs: number): number;
  spanMs: number;
  breaks: { at: number; pausedMs: number }[];
}

/** A pause is drawn at most this share of the sessions' own time. */
const PAUSE_SHARE = 0.03;

export function buildAxis(sessions: readonly Session[]): Axis {
  const active = sessions.reduce((n, s) => n + Math.max(0, s.endMs - s.startMs), 0);
  const shownPause = Math.max(1, Math.round(active * PAUSE_SHARE));
  const offsets: number[] = [];
  const breaks: Axis["breaks"] = [];
  let offset = 0;
  sessions.forEach((s, i) => {
    if (i > 0) {
      const prev = sessions[i - 1]!;
      const end = offsets[i - 1]! + Math.max(0, prev.endMs - prev.startMs);
      const pause = Math.max(0, s.startMs - prev.endMs);
      offset = end + Math.min(pause, shownPause);
      if (pause > shownPause) breaks.push({ at: end, pausedMs: pause });
    }
    offsets.push(offset);
  });
  const last = sessions.at(-1);
  const spanMs = last ? offsets.at(-1)! + Math.max(0, last.endMs - last.startMs) : 0;
  return {
    at(session, epochMs) {
      const s = sessions[session];
      if (!s) return 0;
      return Math.max(0, Math.round(offsets[session]! + epochMs - s.startMs));
    },
    spanMs,
    breaks,
  };
}
