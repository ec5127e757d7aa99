/**
 * The times `gpuplan runs` shows come from files in the run folder, which anyone may have written:
 * only a real moment written as gpuplan writes them (Date#toISOString, UTC) is shown. Anything else
 * — control characters, a huge string, "yesterday", another zone's offset read as if it were UTC,
 * 2026-02-30 (which Date.parse quietly makes March 2) — is unknown, never echoed.
 */

/** `2026-11-23T17:39:27.123Z`; the fraction may be absent or shorter (Slurm's times have none). */
const UTC_TIMESTAMP = /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(?:\.\d{1,3})?Z$/;

/** `value` when it is a real UTC timestamp, else null (unknown). */
export function utcTimestamp(value: unknown): string | null {
  if (typeof value !== "string" || !UTC_TIMESTAMP.test(value)) return null;
  const ms = Date.parse(value);
  if (!Number.isFinite(ms)) return null;
  // A date that does not exist parses as another one: its own text back is the proof it is real.
  return new Date(ms).toISOString().slice(0, 19) === value.slice(0, 19) ? value : null;
}
