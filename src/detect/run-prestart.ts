/**
 * `gpuplan run` of a plan with GPUs checks it against this machine first: a probe child (a Node
 * start and the vendor libraries, ~40 ms) that the run's first step waits for. bin/gpuplan.js
 * calls prestartRunProbes before the CLI loads, so that child comes up while the CLI loads and
 * the plan is read and checked, as `gpuplan detect`'s does (prestart.ts); detect() claims it by
 * the same key, and one nobody claims is killed at exit. Only a plain local run of a plan that
 * names GPUs near its top (or a pipeline file, compiled against the live machine) starts one: a
 * CPU plan, a Slurm submission, a resume, help or any flag this parser does not know start
 * nothing, and the CLI decides as before. This module is small, and bin/gpuplan.js loads
 * prestart.cjs (the vendor probe plan, child_process) only when it starts children: a CPU plan
 * pays for one 4 KB read.
 */
import { closeSync, constants, fstatSync, openSync, readSync } from "node:fs";

/** `run`'s flags that take a value (commander: `--flag value` or `--flag=value`). */
const VALUE_FLAGS = new Set([
  "--pipeline",
  "--events",
  "--lock-timeout",
  "--ui",
  "--bind",
  "--lock-dir",
  "--kill-grace",
  "--cpu-pinning",
  "--spawn",
]);
const BOOLEAN_FLAGS = new Set(["--no-wait", "--json", "--dry-run"]);

/**
 * How much of a plan is read to see whether it names GPUs: its registry follows a header of
 * ~600 bytes (a registry further down only means no head start).
 */
const PEEK_BYTES = 4096;

/**
 * The plan or pipeline file of a `run` command line that runs here and verifies against this
 * machine, or null (another command, --executor slurm, --resume, Slurm task flags, help, a flag
 * it does not know, not exactly one file).
 */
export function runPlanFile(args: readonly string[]): string | null {
  if (args[0] !== "run") return null;
  let file: string | null = null;
  let flagsEnded = false;
  for (let i = 1; i < args.length; i++) {
    const arg = args[i]!;
    if (flagsEnded || !arg.startsWith("-") || arg === "-") {
      if (file !== null) return null;
      file = arg;
      continue;
    }
    if (arg === "--") {
      flagsEnded = true;
      continue;
    }
    const eq = arg.indexOf("=");
    const flag = eq === -1 ? arg : arg.slice(0, eq);
    if (BOOLEAN_FLAGS.has(flag) && eq === -1) continue;
    if (flag === "--executor") {
      const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
      if (value !== "local") return null;
      continue;
    }
    if (!VALUE_FLAGS.has(flag)) return null;
    if (eq === -1) i++;
  }
  return file;
}

/**
 * Whether running `file` will detect this machine's GPUs: a pipeline file always (compiled
 * against them); a plan when its registry, near the top, lists a GPU. A regular file only: a
 * FIFO or a device is left to the CLI, which reads it once. Any doubt is a no.
 */
export function runDetectsGpus(file: string): boolean {
  if (/\.ya?ml$/i.test(file)) return true;
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO for reading would wait for a writer.
    fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  } catch {
    return false;
  }
  try {
    if (!fstatSync(fd).isFile()) return false;
    const head = Buffer.allocUnsafe(PEEK_BYTES);
    const n = readSync(fd, head, 0, PEEK_BYTES, 0);
    return /"registry"\s*:\s*\[\s*\{/.test(head.toString("latin1", 0, n));
  } catch {
    return false;
  } finally {
    closeSync(fd);
  }
}

/**
 * Start the verification's probe children for this `run` command line, when it will want them;
 * whether it did. `start` is prestart.ts's prestartVerificationProbes, which bin/gpuplan.js
 * requires only then.
 */
export function prestartRunProbes(
  args: readonly string[],
  start: (env: NodeJS.ProcessEnv) => void,
  env: NodeJS.ProcessEnv = process.env,
): boolean {
  const file = runPlanFile(args);
  if (file === null || !runDetectsGpus(file)) return false;
  // The CLI drops empty GPUPLAN_* settings before it reads them (src/cli/main.ts); children
  // planned from them would not be the ones detect() asks for.
  for (const name in env) if (name.startsWith("GPUPLAN_") && env[name] === "") return false;
  start(env);
  return true;
}
