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
import { closeSync, constants, fstatSync, openSync, readSync, statSync } from "node:fs";
import { MAX_DURATION_MS, parseDuration } from "../units/duration.js";

/**
 * `run`'s flags this parser knows, each with the values commander would accept: a command line
 * the CLI will refuse must not start a probe (detect's pre-start holds to the same). `--events`
 * is not among them: its file is checked before the plan is, and a bad one is a usage error.
 */
const isDuration = (v: string) => {
  const ms = parseDuration(v);
  return ms !== undefined && ms >= 0 && ms <= MAX_DURATION_MS;
};
const oneOf =
  (...values: string[]) =>
  (v: string) =>
    values.includes(v);
const anyValue = () => true;
const VALUE_FLAGS = new Map<string, (value: string) => boolean>([
  ["--pipeline", anyValue],
  ["--lock-dir", anyValue],
  ["--ui", oneOf("auto", "tui", "plain", "json")],
  ["--bind", oneOf("auto", "exact")],
  ["--cpu-pinning", oneOf("on", "off")],
  ["--spawn", oneOf("auto", "node")],
  ["--executor", oneOf("local")],
  ["--lock-timeout", isDuration],
  ["--kill-grace", isDuration],
]);
const BOOLEAN_FLAGS = new Set(["--no-wait", "--json", "--dry-run"]);
/** The settings commander reads for `run` when their flag is not given: the same checks. */
const SETTINGS: readonly [string, (value: string) => boolean][] = [
  ["GPUPLAN_KILL_GRACE", isDuration],
  ["GPUPLAN_CPU_PINNING", oneOf("on", "off")],
  ["GPUPLAN_SPAWN", oneOf("auto", "node")],
];

/**
 * How much of a plan is read to see whether it names GPUs: its registry follows a header of
 * ~600 bytes (a registry further down only means no head start).
 */
const PEEK_BYTES = 4096;

/**
 * The plan or pipeline file of a `run` command line that runs here and verifies against this
 * machine, or null (another command, --executor slurm, --resume, Slurm task flags, help, a flag
 * it does not know or a value the CLI would refuse, flag or setting, not exactly one file).
 */
export function runPlanFile(args: readonly string[], env: NodeJS.ProcessEnv = process.env): string | null {
  if (args[0] !== "run") return null;
  let file: string | null = null;
  let flagsEnded = false;
  const given = new Set<string>();
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
    given.add(flag);
    if (BOOLEAN_FLAGS.has(flag) && eq === -1) continue;
    const valid = VALUE_FLAGS.get(flag);
    const value = eq === -1 ? args[++i] : arg.slice(eq + 1);
    // A value that looks like a flag, or none at all, is for commander to judge.
    if (!valid || value === undefined || value === "" || value.startsWith("-") || !valid(value)) return null;
  }
  // commander refuses --json with --ui.
  if (given.has("--json") && given.has("--ui")) return null;
  for (const [name, valid] of SETTINGS) {
    const value = env[name];
    if (value !== undefined && !valid(value)) return null;
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
  // Looked at before it is opened: opening a FIFO, even without blocking, lets its writer's open
  // return, and closing it again then lost what the writer wrote (or killed it with SIGPIPE), so
  // the CLI's own read waited for good (`gpuplan run <(cat plan.json)`, `mkfifo p; cat > p &`).
  try {
    if (!statSync(file).isFile()) return false;
  } catch {
    return false;
  }
  let fd: number;
  try {
    // O_NONBLOCK: should the name have become a FIFO since, opening it would wait for a writer.
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
  const file = runPlanFile(args, env);
  if (file === null || !runDetectsGpus(file)) return false;
  // The CLI drops empty GPUPLAN_* settings before it reads them (src/cli/main.ts); children
  // planned from them would not be the ones detect() asks for.
  for (const name in env) if (name.startsWith("GPUPLAN_") && env[name] === "") return false;
  start(env);
  return true;
}
