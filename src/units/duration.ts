/** Durations: `30s`, `15m`, `2h`, `1.5h`, `250ms`, or a number of milliseconds. */
import { pipelineSchema } from "../generated/schema-values.js";

/**
 * The longest wait gpuplan accepts from the command line: a whole number of days under what Node's
 * timers hold (2³¹−1 ms, ~24.8 days; beyond it a timer fires at once).
 */
export const MAX_DURATION_MS = 24 * 86_400_000;

/**
 * The longest duration a pipeline file may give (365 days): the schema's bound on a number of
 * milliseconds, which holds the `365d` form too. Estimates add up to makespans and bounds: 1e300
 * was accepted, overflowed to Infinity and made a plan `run` refused.
 */
export const MAX_FILE_DURATION_MS = pipelineSchema.maximums.Duration;

const FACTORS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The schema's pattern (`$defs/Duration`) decides what is a duration; the unit is its trailing letters. */
const DURATION_RE = new RegExp(pipelineSchema.patterns.Duration, "u");

/** Milliseconds; undefined when the value is not a duration or is longer than MAX_FILE_DURATION_MS. */
export function parseDuration(value: string | number): number | undefined {
  const ms = parseMs(value);
  return ms !== undefined && ms <= MAX_FILE_DURATION_MS ? ms : undefined;
}

/** Whether `value` is written as a duration, however long (past MAX_FILE_DURATION_MS: too long, not misspelt). */
export function isDurationText(value: string): boolean {
  return parseMs(value) !== undefined;
}

function parseMs(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text);
  if (!DURATION_RE.test(text)) return undefined;
  const unit = /[a-z]+$/.exec(text)![0];
  return Math.round(Number(text.slice(0, -unit.length).trim()) * FACTORS[unit]!);
}

/** What a duration's unit may be, for messages. */
export const DURATION_UNITS_TEXT = "ms, s, m, h or d, as in 30s, 15m, 2h, 1.5d";

/** Units people write that are not spelt as gpuplan reads them: what each is in a unit it reads. */
const SPELLINGS: Record<string, { unit: string; times?: number }> = {
  msec: { unit: "ms" },
  msecs: { unit: "ms" },
  millisecond: { unit: "ms" },
  milliseconds: { unit: "ms" },
  sec: { unit: "s" },
  secs: { unit: "s" },
  second: { unit: "s" },
  seconds: { unit: "s" },
  min: { unit: "m" },
  mins: { unit: "m" },
  minute: { unit: "m" },
  minutes: { unit: "m" },
  hr: { unit: "h" },
  hrs: { unit: "h" },
  hour: { unit: "h" },
  hours: { unit: "h" },
  day: { unit: "d" },
  days: { unit: "d" },
  w: { unit: "d", times: 7 },
  wk: { unit: "d", times: 7 },
  week: { unit: "d", times: 7 },
  weeks: { unit: "d", times: 7 },
};

/**
 * The duration gpuplan reads that `text` most likely meant (`10 mins` → 10m, `5S` → 5s, `2w` →
 * 14d), or undefined. An upper-case M is taken for minutes, as no duration here runs for months.
 */
export function durationSuggestion(text: string): string | undefined {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$/u.exec(text);
  if (!m) return undefined;
  const unit = m[2]!.toLowerCase();
  if (Object.hasOwn(FACTORS, unit)) return `${m[1]}${unit}`;
  const spelt = Object.hasOwn(SPELLINGS, unit) ? SPELLINGS[unit] : undefined;
  if (!spelt) return undefined;
  return `${spelt.times ? +(Number(m[1]) * spelt.times).toFixed(3) : m[1]}${spelt.unit}`;
}

/**
 * A duration for people, the one formatter gpuplan has. `short` (the default): 0.4ms, 850ms, 12.3s,
 * 4m05s, 27m, 1h02m, 2h, 3d04h — two units at most, the second left out when it is zero. `clock`, for a ticking
 * elapsed time: 0:05, 4:05, 1:02:03 (whole seconds, since tenths would redraw every frame).
 */
export function formatDuration(ms: number, style: "short" | "clock" = "short"): string {
  const safe = Number.isFinite(ms) ? Math.max(0, ms) : 0;
  const totalSeconds = Math.floor(safe / 1000);
  const seconds = totalSeconds % 60;
  const totalMinutes = Math.floor(totalSeconds / 60);
  const minutes = totalMinutes % 60;
  const totalHours = Math.floor(totalMinutes / 60);
  const two = (n: number): string => String(n).padStart(2, "0");
  if (style === "clock") {
    return totalHours > 0
      ? `${totalHours}:${two(minutes)}:${two(seconds)}`
      : `${totalMinutes}:${two(seconds)}`;
  }
  if (safe < 10) return `${+safe.toFixed(1)}ms`;
  if (safe < 1000) return `${Math.round(safe)}ms`;
  if (safe < 60_000) return `${(Math.floor(safe / 100) / 10).toFixed(1)}s`;
  // The smaller unit only when it is not zero: an estimate of 27m reads better than 27m00s.
  const and = (n: number, unit: string): string => (n === 0 ? "" : `${two(n)}${unit}`);
  if (totalMinutes < 60) return `${totalMinutes}m${and(seconds, "s")}`;
  if (totalHours < 24) return `${totalHours}h${and(minutes, "m")}`;
  return `${Math.floor(totalHours / 24)}d${and(totalHours % 24, "h")}`;
}
