/**
 * `gpuplan detect` spends most of its time waiting for its probe child to start Node and
 * koffi. bin/gpuplan.js calls prestartProbes before the CLI (commander, the command modules)
 * loads, so the child starts that much sooner; detect() then claims it (prestarted.ts), with
 * its deadline from then on. A pre-started child nobody claims is killed when gpuplan exits.
 */
import { parseDuration } from "../units/duration.js";
import { offerPrestarted } from "./prestarted.js";
import { planVendorProbes } from "./probe-plan.js";
import { groupTasks } from "./run-child.js";
import { type StartedChild, startChild } from "./spawn-child.js";

/**
 * Start the probe children for `args` (the arguments after `gpuplan`) when they are a detect
 * command line that certainly probes. Anything else (--help, an unknown flag, a bad --timeout)
 * is left to the CLI, which reports usage errors without ever loading a vendor library.
 */
export function prestartProbes(args: readonly string[], env: NodeJS.ProcessEnv = process.env): void {
  if (!isProbingDetect(args)) return;
  const plan = planVendorProbes(env);
  if (!plan.tasks.length) return;
  const children = new Map<string, StartedChild>();
  for (const group of groupTasks(plan.tasks)) {
    const child = startChild(group, plan.child);
    // Until detect() claims it, the child must not keep gpuplan alive (a usage error, say).
    child.setRef(false);
    children.set(child.key, child);
  }
  offerPrestarted(children);
}

/** `detect` with only the flags it defines, each well-formed (as commander would parse them). */
export function isProbingDetect(args: readonly string[]): boolean {
  if (args[0] !== "detect") return false;
  for (let i = 1; i < args.length; i++) {
    const [flag, inline] = splitFlag(args[i]!);
    if ((flag === "--json" || flag === "--all") && inline === undefined) continue;
    const value = inline ?? args[++i];
    if (value === undefined) return false;
    if (flag === "--save") continue;
    if (flag !== "--timeout") return false;
    const ms = parseDuration(value);
    if (ms === undefined || ms <= 0) return false;
  }
  return true;
}

function splitFlag(arg: string): [string, string | undefined] {
  const eq = arg.indexOf("=");
  return arg.startsWith("--") && eq !== -1 ? [arg.slice(0, eq), arg.slice(eq + 1)] : [arg, undefined];
}
