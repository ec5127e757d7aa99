/**
 * Paths inside a plan are relative to the plan file's own folder, with `/` separators, so a plan's
 * bytes do not depend on how the pipeline path was typed or where gpuplan was started, and a plan
 * moved together with its pipeline (a checkout elsewhere, a CI runner) still finds it. Plans from
 * before recorded the path as typed, relative to where compile ran: reading falls back to that.
 */
import { existsSync } from "node:fs";
import { dirname, isAbsolute, relative, resolve, sep } from "node:path";

/** `file` (as typed, relative to `cwd`) as a plan in folder `planDir` records it. */
export function pathInPlan(file: string, planDir: string, cwd = process.cwd()): string {
  const rel = relative(resolve(cwd, planDir), resolve(cwd, file));
  return (rel === "" ? "." : rel).split(sep).join("/");
}

/**
 * The absolute path a plan's recorded pipeline path names: next to the plan (plans of now), else
 * relative to `cwd` (older plans recorded it as typed), else next to the plan even if it is not
 * there (a plan shipped without its pipeline still runs; only the folder matters).
 */
export function resolvePlanPath(recorded: string, planFile: string, cwd = process.cwd()): string {
  if (isAbsolute(recorded)) return recorded;
  const fromPlan = resolve(cwd, dirname(planFile), recorded);
  if (existsSync(fromPlan)) return fromPlan;
  const fromCwd = resolve(cwd, recorded);
  return existsSync(fromCwd) ? fromCwd : fromPlan;
}
