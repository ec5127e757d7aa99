/**
 * Parsers for option values that are durations or sizes, shared by every command so that a bad
 * value gets one code (invalid-duration, invalid-size) and one message wherever it is given — on
 * the command line or in a GPUPLAN_* variable (commander's `.env()` runs the same parser).
 * Values are bounded: Node's timers hold at most 2³¹−1 ms (~24.8 days) and fire at once beyond,
 * so `detect --timeout 25d` would time every probe out immediately.
 */
import { InvalidArgumentError } from "@commander-js/extra-typings";
import type { Code } from "../problems/codes.js";
import {
  DURATION_UNITS_TEXT,
  durationSuggestion,
  formatDuration,
  isDurationText,
  MAX_DURATION_MS,
  parseDuration,
} from "../units/duration.js";
import { formatSize, parseSize, SIZE_UNITS_TEXT, sizeSuggestions } from "../units/size.js";

/**
 * commander reports a parser's failure in its own words and with its own code; the code gpuplan
 * prints instead is left here for main.ts to pick up (parsing is synchronous and stops at the
 * first failure, so there is never more than one).
 */
let failedCode: Code | undefined;

export function takeArgumentFailureCode(): Code | undefined {
  const code = failedCode;
  failedCode = undefined;
  return code;
}

function invalid(code: Code, message: string): never {
  failedCode = code;
  throw new InvalidArgumentError(message);
}

/** A duration option's parser: `30s`, `10m`, `2h`, `1d` or milliseconds, between `min` and `max` ms. */
export function durationArgument(
  bounds: { min?: number; max?: number } = {},
): (value: string, previous?: unknown) => number {
  const min = bounds.min ?? 0;
  // Above the default only for durations no timer of gpuplan's waits for (a Slurm time limit).
  const max = bounds.max ?? MAX_DURATION_MS;
  return (value) => {
    // `1000d` is a duration past any bound: said to be too long, not offered back as a correction.
    const ms = parseDuration(value) ?? (isDurationText(value) ? Number.POSITIVE_INFINITY : undefined);
    if (ms === undefined) {
      const meant = durationSuggestion(value);
      invalid(
        "invalid-duration",
        `It is not a duration${meant ? `: did you mean ${meant}?` : "."} A duration is milliseconds or a number with a unit: ${DURATION_UNITS_TEXT}.`,
      );
    }
    if (ms < min) {
      invalid(
        "invalid-duration",
        min === 1 ? "It must be longer than 0." : `It is shorter than ${formatDuration(min)}.`,
      );
    }
    if (ms > max) {
      invalid(
        "invalid-duration",
        max === MAX_DURATION_MS
          ? `It is longer than ${describeMax(max)}, the most gpuplan waits for anything.`
          : `It is longer than ${describeMax(max)}.`,
      );
    }
    return ms;
  };
}

/** A size option's parser: `800MiB`, `12GiB`, `16GB` or bytes, between `min` and `max` bytes. */
export function sizeArgument(
  bounds: { min?: number; max?: number } = {},
): (value: string, previous?: unknown) => number {
  const min = bounds.min ?? 0;
  const max = bounds.max ?? Number.MAX_SAFE_INTEGER;
  return (value) => {
    const bytes = parseSize(value);
    if (bytes === undefined) {
      const meant = sizeSuggestions(value);
      invalid(
        "invalid-size",
        `It is not a size${meant.length > 0 ? `: did you mean ${meant.join(" or ")}?` : "."} A size is bytes or a number with a unit: ${SIZE_UNITS_TEXT}.`,
      );
    }
    if (bytes < min) invalid("invalid-size", `It is less than ${formatSize(min)}.`);
    if (bytes > max) invalid("invalid-size", `It is more than ${formatSize(max)}.`);
    return bytes;
  };
}

const describeMax = (ms: number): string =>
  ms % 86_400_000 === 0 ? `${ms / 86_400_000}d` : formatDuration(ms);

/**
 * A count option's parser: a whole number, at least `min`. Digits only, as a duration or size is
 * read: `" 3"` (a quoting slip in a script) is refused, not taken as 3. A negative whole number is
 * one, so it is told the bound it is under, not that it is no number.
 */
export function countArgument(bounds: { min?: number } = {}): (value: string, previous?: unknown) => number {
  const min = bounds.min ?? 0;
  const tooSmall = `It must be ${min} or more.`;
  return (value) => {
    if (/^-\d+$/.test(value)) invalid("invalid-option-value", tooSmall);
    if (!/^\d+$/.test(value)) invalid("invalid-option-value", "It is not a whole number.");
    const n = Number(value);
    if (!Number.isSafeInteger(n)) invalid("invalid-option-value", "It is too large.");
    if (n < min) invalid("invalid-option-value", tooSmall);
    return n;
  };
}

/**
 * A path option's parser (a file, a folder, a run): anything but the empty text. `-o "$OUT"` with
 * OUT unset gives `""`, which each command read its own way — `--history ""` as the runs folder
 * itself ("not a gpuplan run folder", exit 1), `--lock-dir ""` as the current folder.
 */
export function pathArgument(): (value: string, previous?: unknown) => string {
  return (value) => {
    if (value === "") invalid("invalid-option-value", "It is empty: name a file or folder.");
    return value;
  };
}

/** pathArgument for a repeatable or variadic option: each value checked, all of them kept in order. */
export function pathsArgument(): (value: string, previous: string[] | undefined) => string[] {
  const check = pathArgument();
  return (value, previous) => [...(previous ?? []), check(value)];
}
