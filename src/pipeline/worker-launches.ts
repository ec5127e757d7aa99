/**
 * Steps sharing a worker key are meant to share one warm process, but the run's pool gives a task
 * only to a worker started with the same command, `cwd` and `env` as its step, and replaces it
 * otherwise (src/run/warm/worker-pool.ts): a `{plate}` in a worker step's env restarts the worker,
 * and loses its model, for every plate. That still runs correctly, so it is a warning — once per
 * step of the file, after matrix expansion and across pipelines, naming the first launch of the key.
 */
import { normalize } from "node:path";
import { type Problem, warning } from "../problems/problem.js";
import type { ResolvedPipeline, ResolvedStep } from "./model.js";

interface Launch {
  argv: string;
  cwd: string;
  env: Readonly<Record<string, string>>;
  pipeline: ResolvedPipeline;
  step: ResolvedStep;
}

interface Difference {
  first: Launch;
  later: Launch;
  parts: string[];
  pointer: string;
}

/** Warnings for worker keys whose steps would start their worker in different ways. */
export function workerLaunchProblems(pipelines: readonly ResolvedPipeline[], file: string): Problem[] {
  const firsts = new Map<string, Launch>();
  const launches = new Map<string, Set<string>>();
  const differences: Difference[] = [];
  const said = new Set<string>();
  for (const pipeline of pipelines) {
    for (const step of pipeline.steps) {
      if (!step.worker) continue;
      const { key } = step.worker;
      const launch: Launch = {
        argv: JSON.stringify(step.worker.argv),
        // Compared as the run resolves it: no `cwd` and `.` are both the pipeline file's folder.
        cwd: normalize(step.cwd ?? "."),
        env: step.env,
        pipeline,
        step,
      };
      const seen = launches.get(key) ?? new Set<string>();
      launches.set(key, seen);
      seen.add(launchKey(launch));
      const first = firsts.get(key);
      if (first === undefined) {
        firsts.set(key, launch);
        continue;
      }
      // Two commands under one key in one pipeline entry are already an error (worker-key-conflict).
      if (first.argv !== launch.argv && first.pipeline.pointer === pipeline.pointer) continue;
      if (said.has(step.pointer)) continue;
      const difference = compare(first, launch);
      if (difference === undefined) continue;
      said.add(step.pointer);
      differences.push(difference);
    }
  }
  return differences.map((d) => launchWarning(d, launches.get(d.first.step.worker!.key)!.size, file));
}

const launchKey = (l: Launch): string =>
  JSON.stringify([l.argv, l.cwd, Object.entries(l.env).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))]);

function compare(first: Launch, later: Launch): Difference | undefined {
  const parts: string[] = [];
  let pointer: string | undefined;
  if (first.argv !== later.argv) {
    parts.push("command");
    pointer = `${later.step.pointer}/worker/run`;
  }
  if (first.cwd !== later.cwd) {
    parts.push("`cwd`");
    pointer ??= `${later.step.pointer}/cwd`;
  }
  const names = [...new Set([...Object.keys(first.env), ...Object.keys(later.env)])]
    .filter((k) => first.env[k] !== later.env[k])
    .sort();
  if (names.length > 0) {
    const shown = names.slice(0, 3).map((k) => `\`${k}\``);
    if (names.length > 3) shown.push(`${names.length - 3} more`);
    parts.push(`env ${shown.join(", ")}`);
    pointer ??= `${later.step.pointer}/env/${names[0]!.replaceAll("~", "~0").replaceAll("/", "~1")}`;
  }
  if (pointer === undefined) return undefined;
  return { first, later, parts, pointer };
}

function launchWarning({ first, later, parts, pointer }: Difference, count: number, file: string): Problem {
  const key = later.step.worker!.key;
  const where = (l: Launch) => `step \`${l.step.id}\` of pipeline \`${l.pipeline.name}\``;
  return warning({
    code: "worker-launch-differs",
    message: `worker key \`${key}\` is started with another ${parts.join(", ")} in ${where(later)} than in ${where(first)}: a worker runs as it was started, so a GPU's worker is stopped and started again (its model loaded again) whenever its next task's step differs — ${count} different launches of this key`,
    hint: "pass per-task values in the task input instead (the step's `run` words reach the worker as `args.argv`, matrix values as `args.matrix`), or give the steps distinct worker keys",
    file,
    pointer,
  });
}
