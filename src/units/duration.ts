/** Durations: `30s`, `15m`, `2h`, `1.5h`, `250ms`, or a number of milliseconds. */
import { pipelineSchema } from "../generated/schema-values.js";

const FACTORS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 };

/** The schema's pattern (`$defs/Duration`) decides what is a duration; the unit is its trailing letters. */
const DURATION_RE = new RegExp(pipelineSchema.patterns.Duration, "u");

export function parseDuration(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isFinite(value) && value >= 0 ? Math.round(value) : undefined;
  const text = value.trim();
  if (/^[0-9]+$/.test(text)) return Number(text);
  if (!DURATION_RE.test(text)) return undefined;
  const unit = /[a-z]+$/.exec(text)![0];
  return Math.round(Number(text.slice(0, -unit.length).trim()) * FACTORS[unit]!);
}

export function formatDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  if (ms < 60_000) return `${+(ms / 1000).toFixed(1)}s`;
  if (ms < 3_600_000) return `${+(ms / 60_000).toFixed(1)}m`;
  return `${+(ms / 3_600_000).toFixed(2)}h`;
}
