/**
 * Event times a report draws. events.jsonl is outside text, and one event stamped in the year
 * 9999 (a hand edit, a node's clock gone wrong) stretched the timeline over eight thousand years,
 * every real bar a sliver, and the page never finished drawing. gpuplan writes a session's events
 * (a run.start to the next) in the order they happen, so an event is plausible from its session's
 * start until the session ended: its run.end's own time (where that is plausible itself), the next
 * session's start, and the time the folder was read — nothing happens in the future. Wall-clock
 * times only: run.end's durationMs is Node's monotonic clock, which does not count a suspended
 * laptop, so a run slept through would have had its real events moved. An event outside that is
 * drawn at the time of the plausible event before it, and a note says so. Pure.
 */
import type { RunEvent } from "../run/record/events.js";

/** Slack for clocks: an event this much before its session's start, or after its bound, is still drawn as stamped. */
const SLACK_MS = 60_000;

export interface PlausibleTimes {
  events: RunEvent[];
  /** Said when some events' times were not plausible, else null. */
  note: string | null;
}

/** The events with implausible times moved to the last plausible time before them. `nowMs`: when the folder was read. */
export function clampImplausibleTimes(events: readonly RunEvent[], nowMs?: number): PlausibleTimes {
  const bounds = sessionBounds(events, nowMs);
  const out: RunEvent[] = [];
  let session = -1;
  let last = 0;
  let moved = 0;
  let first: RunEvent | null = null;
  for (const e of events) {
    const t = Date.parse(e.ts);
    if (e.event === "run.start" || session < 0) {
      // A session's first event is its start: what the others are judged by.
      session++;
      last = t;
      out.push(e);
      continue;
    }
    const b = bounds[session];
    // NaN fails the comparisons: a time that does not parse is not plausible either.
    if (!b || (t >= b.startMs - SLACK_MS && t <= b.endMs)) {
      out.push(e);
      if (t > last) last = t;
      continue;
    }
    moved++;
    first ??= e;
    out.push({ ...e, ts: new Date(last).toISOString() } as RunEvent);
  }
  return {
    events: out,
    note:
      first === null
        ? null
        : `events.jsonl: ${moved} event(s) have a time outside their run session and are drawn at the time of the event before them (the first: ${describe(first)} at ${first.ts})`,
  };
}

/**
 * Each session's start and the latest time an event of it can plausibly have; null for a session
 * whose own start cannot be judged (it does not parse, or it is after the folder was read).
 */
function sessionBounds(
  events: readonly RunEvent[],
  nowMs: number | undefined,
): ({ startMs: number; endMs: number } | null)[] {
  const now = nowMs === undefined ? Number.POSITIVE_INFINITY : nowMs + SLACK_MS;
  const bounds: ({ startMs: number; endMs: number } | null)[] = [];
  for (const e of events) {
    if (e.event === "run.start" || bounds.length === 0) {
      const t = Date.parse(e.ts);
      const prev = bounds.at(-1);
      // A session ends before the next one starts.
      if (prev && t >= prev.startMs) prev.endMs = Math.min(prev.endMs, t + SLACK_MS);
      bounds.push(Number.isFinite(t) && t <= now ? { startMs: t, endMs: now } : null);
    } else if (e.event === "run.end") {
      // The session's last event: nothing of it comes later (a run.end stamped implausibly bounds nothing).
      const b = bounds.at(-1);
      const t = Date.parse(e.ts);
      if (b && t >= b.startMs && t <= b.endMs) b.endMs = Math.min(b.endMs, t + SLACK_MS);
    }
  }
  return bounds;
}

function describe(e: RunEvent): string {
  const where = "pipeline" in e && typeof e.pipeline === "string" ? ` of ${e.pipeline}` : "";
  const step = "step" in e && typeof e.step === "string" ? `/${e.step}` : "";
  return `${e.event}${where}${step}`;
}
