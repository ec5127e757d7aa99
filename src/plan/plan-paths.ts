/**
 * Paths inside a plan are relative to the plan file's own folder, with `/` separators, so a plan's
 * bytes do not depend on how the pipeline path was typed or where gpuplan was started, and a plan
 * moved together with its pipeline (a checkout elsewhere, a CI runner) still finds it. Plans from
 * before recorded the path as typed, relative to where compile ran: reading falls back to that.
 *
 * Both folders are taken by their real paths: the current folder is one already (getcwd), so a
 * path typed through a linked folder (`$PWD/x.yaml` under a linked home) recorded `../../link/x.yaml`
 * beside `x.yaml` for the same file, a path that leaves the project. A file's own name is kept:
 * a pipeline that is a link still runs its steps in the link's folder.
 */
import { existsSync, realpathSync } from "node:fs";
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from "node:path";

/** `file` (as typed, relative to `cwd`) as a plan in folder `planDir` records it. */
export function pathInPlan(file: string, planDir: string, cwd = process.cwd()): string {
  const target = resolve(cwd, file);
  const rel = relative(
    realFolder(resolve(cwd, planDir)),
    join(realFolder(dirname(target)), basename(target)),
  );
  return (rel === "" ? "." : rel).split(sep).join("/");
}

/**
 * The absolute path a plan's recorded pipeline path names: next to the plan (plans of now), else
 * relative to `cwd` (older plans recorded it as typed), else next to the plan even if it is not
 * there (a plan shipped without its pipeline still runs; only the folder matters).
 */
export function resolvePlanPath(recorded: string, planFile: string, cwd = process.cwd()): string {
  if (isAbsolute(recorded)) return recorded;
  const fromPlan = resolve(realPlanFolder(planFile, cwd), recorded);
  if (existsSync(fromPlan)) return fromPlan;
  const fromCwd = resolve(cwd, recorded);
  return existsSync(fromCwd) ? fromCwd : fromPlan;
}

/** The real folder a plan's recorded paths are relative to (see the header). */
export function realPlanFolder(planFile: string, cwd = process.cwd()): string {
  return realFolder(resolve(cwd, dirname(planFile)));
}

/** An absolute folder with its links resolved as far as it exists (-o may name a folder not made yet). */
function realFolder(dir: string): string {
  try {
    return realpathSync(dir);
  } catch {
    const up = dirname(dir);
    return up === dir ? dir : join(realFolder(up), basename(dir));
  }
}
