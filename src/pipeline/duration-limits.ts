/**
 * Durations longer than gpuplan can hold, each a located error. The schema bounds a number of
 * milliseconds (365 days), but its string form passes by pattern (`99999999d`). Timers past
 * Node's ~24.8 days wait in steps (src/run/long-timeout.ts), so a timeout has the same bound.
 */
import { error, type Problem, toPointer } from "../problems/problem.js";
import type { Duration, GpuplanPipelineFile, StepDefaults, StepSpec } from "../schema-types/pipeline.js";
import { displayText } from "../text/safe-text.js";
import { MAX_FILE_DURATION_MS, parseDuration } from "../units/duration.js";

const DAY_MS = 86_400_000;

/** `skip`: indices of pipelines left out after schema errors. */
export function durationProblems(
  data: GpuplanPipelineFile,
  file: string,
  skip: ReadonlySet<number>,
): Problem[] {
  const problems: Problem[] = [];
  const check = (value: Duration | undefined, path: (string | number)[]) => {
    if (value === undefined) return;
    const max = MAX_FILE_DURATION_MS;
    const ms = parseDuration(value);
    if (ms !== undefined && ms <= max) return;
    const days = max / DAY_MS;
    problems.push(
      error({
        code: "duration-out-of-range",
        // The value is shown cut: a 100,000-digit timeout came back whole.
        message: `\`${String(path.at(-1))}\` is longer than ${days} days: ${displayText(String(value), 40)}`,
        hint: `durations in a pipeline file are at most ${days} days (${days}d)`,
        file,
        pointer: toPointer(path),
      }),
    );
  };
  const settings = (s: StepDefaults | StepSpec, at: (string | number)[]) => {
    check(s.timeout, [...at, "timeout"]);
    check(s.estimate, [...at, "estimate"]);
    if (typeof s.keep_warm === "object") check(s.keep_warm.ttl, [...at, "keep_warm", "ttl"]);
    s.on_oom?.ladder?.forEach((rung, i) => {
      if (typeof rung === "object" && "wait" in rung)
        check(rung.wait, [...at, "on_oom", "ladder", i, "wait"]);
    });
  };
  if (data.defaults) settings(data.defaults, ["defaults"]);
  check(data.registry?.executor?.slurm?.time, ["registry", "executor", "slurm", "time"]);
  data.pipelines.forEach((p, i) => {
    if (skip.has(i)) return;
    p.steps.forEach((s, j) => {
      const at = ["pipelines", i, "steps", j];
      settings(s, at);
      check(s.worker?.ready_timeout, [...at, "worker", "ready_timeout"]);
    });
  });
  return problems;
}
