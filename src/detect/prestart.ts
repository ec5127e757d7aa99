/**
 * `gpuplan detect` spends most of its time waiting for its probe child to start Node and
 * koffi. bin/gpuplan.js calls prestartProbes before the CLI (commander, the command modules)
 * loads, so the child starts that much sooner; detect() then claims it (prestarted.ts), with
 * its deadline from then on. A pre-started child nobody claims is killed when gpuplan exits.
 */
import { MAX_DURATION_MS, parseDuration } from "../units/duration.js";
import { offerPlan, offerPrestarted } from "./prestarted.js";
import { cudaOnlyIfNeeded, planVendorProbes, servingTasks } from "./probe-plan.js";
import { groupTasks } from "./run-child.js";
import { type StartedChild, startChild } from "./spawn-child.js";

/** `detect`'s flags, as commander would hand them to the command. */
export interface DetectArgs {
  json?: true;
  all?: true;
  save?: string;
  /** Milliseconds, parsed and bounded. */
  timeout: number;
  /** `--lock-dir`, when given (the CLI falls back to GPUPLAN_LOCK_DIR, then the default). */
  lockDir?: string;
}

/**
 * Start the probe children for `args` (the arguments after `gpuplan`) when they are a detect
 * command line that certainly probes. Anything else (--help, an unknown flag, a bad --timeout)
 * is left to the CLI, which reports usage errors without ever loading a vendor library. Returns
 * the parsed flags of such a command line, which bin/gpuplan.js then runs without the rest of
 * the CLI (src/cli/detect-cli.ts), or null.
 */
export function prestartProbes(
  args: readonly string[],
  env: NodeJS.ProcessEnv = process.env,
): DetectArgs | null {
  const parsed = parseDetectArgs(args);
  if (!parsed) return null;
  prestartVerificationProbes(env);
  return parsed;
}

/**
 * Search the vendor libraries for `env` and start a probe child per group, left for the next
 * detect() of this process with that very environment (`gpuplan detect`, and a run's check of its
 * plan against the machine: run-prestart.ts). With `serveSampler` (a run), each child that has
 * memory probes (and no HIP: probe-plan.ts servingTasks) stays up once it has answered, to serve
 * the run's memory sampler: one Node start for both. With `cudaOnlyIfNeeded` (a run, as its
 * detect() asks: DetectOptions), CUDA is probed only where NVML cannot tell all about the GPUs.
 */
export function prestartVerificationProbes(
  env: NodeJS.ProcessEnv = process.env,
  options: { serveSampler?: boolean; cudaOnlyIfNeeded?: boolean } = {},
): void {
  const plan = planVendorProbes(env, cudaOnlyIfNeeded(options, env));
  offerPlan(env, plan);
  if (!plan.tasks.length) return;
  const children = new Map<string, StartedChild>();
  for (const group of groupTasks(plan.tasks)) {
    const serve = options.serveSampler ? servingTasks(group) : [];
    const child = startChild(group, serve.length ? { ...plan.child, serve } : plan.child);
    // Until detect() claims it, the child must not keep gpuplan alive (a usage error, say).
    child.setRef(false);
    children.set(child.key, child);
  }
  offerPrestarted(children);
}

/**
 * `detect` with only the flags it defines, each well-formed, parsed as commander would (a value
 * given twice: the last one). Anything else is null: the full CLI parses and reports it.
 */
export function parseDetectArgs(args: readonly string[]): DetectArgs | null {
  if (args[0] !== "detect") return null;
  const parsed: DetectArgs = { timeout: 10_000 };
  for (let i = 1; i < args.length; i++) {
    const [flag, inline] = splitFlag(args[i]!);
    if ((flag === "--json" || flag === "--all") && inline === undefined) {
      parsed[flag === "--json" ? "json" : "all"] = true;
      continue;
    }
    const value = inline ?? args[++i];
    // A value that looks like a flag, or none at all, is for commander to judge.
    if (value === undefined || value === "" || value.startsWith("-")) return null;
    if (flag === "--save") parsed.save = value;
    else if (flag === "--lock-dir") parsed.lockDir = value;
    else if (flag === "--timeout") {
      // Bounded as the CLI's duration parser bounds it (src/cli/arg-parsers.ts).
      const ms = parseDuration(value);
      if (ms === undefined || ms <= 0 || ms > MAX_DURATION_MS) return null;
      parsed.timeout = ms;
    } else return null;
  }
  return parsed;
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf("=");
  return arg.startsWith("--") && eq !== -1 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
}
