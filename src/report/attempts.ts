/**
 * A run's events folded into what happened, session by session: the attempts (a gpu.step.start
 * paired with the gpu.step.end of the same step), the slots pipelines held, the waits, the skips,
 * the warm-worker loads and reuses and the memory readings. Pure; times stay epoch ms here and
 * go onto the report's axis in run-report.ts.
 */
import type { RunEvent, RunEventOf } from "../run/record/events.js";
import type { MemoryReading } from "../schema-types/run-events.js";
import type { Session } from "./axis.js";

export const attemptKey = (pipeline: string, step: string, attempt: number): string =>
  `${pipeline}\u0000${step}\u0000${attempt}`;
const stepKey = (pipeline: string, step: string): string => `${pipeline}\u0000${step}`;

export interface FoldedAttempt {
  session: number;
  pipeline: string;
  step: string;
  attempt: number;
  device: string;
  startMs: number;
  endMs: number | null;
  start: RunEventOf<"gpu.step.start">;
  end: RunEventOf<"gpu.step.end"> | null;
  /** Another attempt followed it (gpu.step.retry). */
  retried: boolean;
  /** It is the on_oom CPU fallback. */
  fallback: boolean;
  load: [number, number] | null;
  reused: boolean;
}

interface FoldedHold {
  session: number;
  pipeline: string;
  gpu: string;
  slots: number[];
  /** The exclusive step, for a step's hold of every slot. */
  step: string | null;
  startMs: number;
  endMs: number;
}

interface FoldedWait {
  session: number;
  pipeline: string;
  step: string | null;
  gpu: string;
  startMs: number;
  endMs: number;
}

interface FoldedSkip {
  session: number;
  pipeline: string;
  step: string;
  atMs: number;
  cause: RunEventOf<"gpu.step.skip">["cause"];
  reason: string;
}

export interface FoldedRun {
  sessions: Session[];
  /** The last session's run.end status, or null when it never ended. */
  status: "ok" | "failed" | "interrupted" | null;
  /** The pipelines the sessions were started with (the first session's). */
  pipelines: string[];
  attempts: FoldedAttempt[];
  holds: FoldedHold[];
  waits: FoldedWait[];
  skips: FoldedSkip[];
  /** Steps that never started because their slot wait ran past --lock-timeout. */
  lockTimeouts: { session: number; pipeline: string; step: string; waitedMs: number }[];
  /** Slot waits per pipeline, summed. */
  waitedMs: Map<string, number>;
  memory: { session: number; atMs: number; reading: MemoryReading }[];
  /** Per session, the run.end durations (null when a session never ended). */
  durations: (number | null)[];
}

export function foldRunEvents(events: readonly RunEvent[]): FoldedRun {
  const folded: FoldedRun = {
    sessions: [],
    status: null,
    pipelines: [],
    attempts: [],
    holds: [],
    waits: [],
    skips: [],
    lockTimeouts: [],
    waitedMs: new Map(),
    memory: [],
    durations: [],
  };
  let session = -1;
  let running = new Map<string, FoldedAttempt>();
  let lastOf = new Map<string, FoldedAttempt>();
  let held = new Map<string, { slots: number[]; startMs: number }>();
  let waiting = new Map<string, number>();
  let loads = new Map<string, number>();
  let fallbackNext = new Set<string>();
  const holdKey = (pipeline: string, gpu: string, step: string | null) =>
    `${pipeline}\u0000${gpu}\u0000${step ?? ""}`;

  const closeSession = (endMs: number) => {
    const s = folded.sessions[session];
    if (!s) return;
    s.endMs = Math.max(s.endMs, endMs);
    // What never ended ends with the session (gpuplan was killed, or the file was cut).
    for (const a of running.values()) a.endMs = s.endMs;
    for (const [key, h] of held) {
      const [pipeline, gpu, step] = key.split("\u0000") as [string, string, string];
      folded.holds.push({
        session,
        pipeline,
        gpu,
        slots: h.slots,
        step: step || null,
        startMs: h.startMs,
        endMs: s.endMs,
      });
    }
    for (const [key, startMs] of waiting) {
      const [pipeline, gpu, step] = key.split("\u0000") as [string, string, string];
      folded.waits.push({ session, pipeline, gpu, step: step || null, startMs, endMs: s.endMs });
    }
  };

  for (const e of events) {
    const t = Date.parse(e.ts);
    if (e.event === "run.start" || session < 0) {
      if (session >= 0) closeSession(folded.sessions[session]!.endMs);
      session++;
      folded.sessions.push({ startMs: t, endMs: t, ended: false });
      folded.durations.push(null);
      running = new Map();
      lastOf = new Map();
      held = new Map();
      waiting = new Map();
      loads = new Map();
      fallbackNext = new Set();
      if (e.event === "run.start" && folded.pipelines.length === 0) folded.pipelines = [...e.pipelines];
      if (e.event === "run.start") continue;
    }
    const current = folded.sessions[session]!;
    current.endMs = Math.max(current.endMs, t);
    switch (e.event) {
      case "run.end":
        current.ended = true;
        folded.durations[session] = e.durationMs;
        folded.status = e.status;
        closeSession(t);
        running = new Map();
        held = new Map();
        waiting = new Map();
        break;
      case "gpu.step.start": {
        const key = stepKey(e.pipeline, e.step);
        const a: FoldedAttempt = {
          session,
          pipeline: e.pipeline,
          step: e.step,
          attempt: e.attempt,
          device: e.device,
          startMs: t,
          endMs: null,
          start: e,
          end: null,
          retried: false,
          fallback: fallbackNext.delete(key),
          load: null,
          reused: false,
        };
        running.set(key, a);
        lastOf.set(key, a);
        folded.attempts.push(a);
        break;
      }
      case "gpu.step.end": {
        const key = stepKey(e.pipeline, e.step);
        const a = running.get(key);
        // Another attempt's end (a line out of place in a merged or edited file) closes nothing:
        // taken as this one's, attempt 2 read as ended with attempt 1's status, and its own end
        // was then dropped.
        if (a && a.attempt === e.attempt) {
          running.delete(key);
          a.end = e;
          // The attempt's own measure of its length; the event's time is when it was reported.
          a.endMs = Math.max(a.startMs, Math.min(t, a.startMs + e.durationMs));
        } else if (e.status === "lock-timeout") {
          folded.lockTimeouts.push({ session, pipeline: e.pipeline, step: e.step, waitedMs: e.durationMs });
        }
        break;
      }
      case "gpu.step.retry": {
        const key = stepKey(e.pipeline, e.step);
        const prev = lastOf.get(key);
        if (prev) prev.retried = true;
        if (e.nextDevice === "cpu") fallbackNext.add(key);
        break;
      }
      case "gpu.step.skip":
        folded.skips.push({
          session,
          pipeline: e.pipeline,
          step: e.step,
          atMs: t,
          cause: e.cause,
          reason: e.reason,
        });
        break;
      case "gpu.lock.wait":
        waiting.set(holdKey(e.pipeline, e.gpu, e.step), t);
        break;
      case "gpu.lock.acquired": {
        const key = holdKey(e.pipeline, e.gpu, e.step);
        const since = waiting.get(key);
        if (since !== undefined) {
          waiting.delete(key);
          folded.waits.push({
            session,
            pipeline: e.pipeline,
            gpu: e.gpu,
            step: e.step,
            startMs: since,
            endMs: t,
          });
        }
        if (e.step === null)
          folded.waitedMs.set(e.pipeline, (folded.waitedMs.get(e.pipeline) ?? 0) + e.waitedMs);
        held.set(key, { slots: [...e.slots], startMs: t });
        break;
      }
      case "gpu.lock.released": {
        const key = holdKey(e.pipeline, e.gpu, e.step);
        const h = held.get(key);
        if (h) {
          held.delete(key);
          folded.holds.push({
            session,
            pipeline: e.pipeline,
            gpu: e.gpu,
            slots: h.slots,
            step: e.step,
            startMs: h.startMs,
            endMs: t,
          });
        }
        break;
      }
      case "gpu.memory.snapshot":
        for (const reading of e.gpus) folded.memory.push({ session, atMs: t, reading });
        break;
      case "gpu.model.load_start":
        if (e.pipeline !== null && e.step !== null) loads.set(stepKey(e.pipeline, e.step), t);
        break;
      case "gpu.model.load_complete": {
        if (e.pipeline === null || e.step === null) break;
        const key = stepKey(e.pipeline, e.step);
        const a = running.get(key) ?? lastOf.get(key);
        const from = loads.get(key) ?? t - e.duration_ms;
        if (a) a.load = [Math.max(from, a.startMs), t];
        loads.delete(key);
        break;
      }
      case "gpu.model.cache_reuse": {
        if (e.pipeline === null || e.step === null) break;
        const a = running.get(stepKey(e.pipeline, e.step));
        if (a) a.reused = true;
        break;
      }
      default:
        break;
    }
  }
  if (session >= 0 && !folded.sessions[session]!.ended) closeSession(folded.sessions[session]!.endMs);
  if (folded.sessions.at(-1)?.ended === false) folded.status = null;
  return folded;
}
