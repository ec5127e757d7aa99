/**
 * One way to start a step process, whichever starter is used: posix_spawn through koffi where it
 * works (posix-spawn.ts: a burst of short steps costs about what xargs pays), else Node's
 * child_process. Either way the step gets /dev/null on stdin, the caller's files as stdout and
 * stderr (no pipes: the step writes its log itself, see step-output.ts), the inherited slot-lock
 * fds from 3 on, its own session and process group, `cwd` and `env`.
 * `spawn: "node"` (`--spawn node`, GPUPLAN_SPAWN=node) forces child_process, to rule the native
 * starter out when debugging.
 */
import { spawn } from "node:child_process";
import { openSync } from "node:fs";
import { loadAffinityControl, startPinned } from "./cpu-affinity.js";
import { launchProblem } from "./launch-problem.js";
import { loadPosixSpawner, type PosixSpawner, type ProcessExit } from "./posix-spawn.js";
import { resolveCommand } from "./resolve-command.js";

export type { ProcessExit } from "./posix-spawn.js";

/** `auto`: posix_spawn where it works, else child_process; `node`: always child_process. */
export type SpawnMethod = "auto" | "node";

export interface StartRequest {
  command: string;
  args: readonly string[];
  cwd: string;
  env: Record<string, string>;
  /** Descriptors the child gets as its fds 1 and 2 (the caller keeps and closes its own). */
  stdout: number;
  stderr: number;
  /** The child gets them as fds 3, 4, … */
  inheritFds: readonly number[];
  /** Pin the process to these CPUs from its start (cpu-affinity.ts); absent = gpuplan's own mask. */
  cpus?: readonly number[] | null;
  /** Default `auto`. */
  spawn?: SpawnMethod;
}

export interface StartedProcess {
  pid: number;
  /** Its start in clock ticks since boot, where known without reading /proc (spawn-ticks.ts). */
  startTicks?: number | null;
  /** Resolves when the process has exited (grandchildren may live on in its process group). */
  exit: Promise<ProcessExit>;
}

/**
 * The process, or why it could not start: a missing working folder or program in words
 * (launch-problem.ts), anything else in child_process's (`spawn NAME EACCES`).
 */
export type StartResult = { process: StartedProcess } | { error: string };

export async function startProcess(request: StartRequest): Promise<StartResult> {
  // A missing folder or program is said as such, not as `spawn NAME ENOENT`.
  const problem = launchProblem(request.command, request.cwd, request.env.PATH);
  if (problem !== null) return { error: problem };
  const spawner = request.spawn === "node" ? null : await loadPosixSpawner();
  if (request.cpus?.length) await loadAffinityControl();
  // Both starters create the child synchronously, so the mask it inherits is the one set here.
  return spawner
    ? startPinned(request.cpus, () => startNative(spawner, request))
    : startPinned(request.cpus, () => startWithNode(request));
}

let devNull: number | undefined;

function startNative(spawner: PosixSpawner, request: StartRequest): StartResult {
  const { command, cwd, env } = request;
  const failed = (code: string): StartResult => ({ error: `spawn ${command} ${code}` });
  let file = resolveCommand(command, cwd, env.PATH);
  if (file === null) return failed("ENOENT");
  try {
    devNull ??= openSync("/dev/null", "r");
  } catch (e) {
    // Out of descriptors (a low `ulimit -n`, many steps at once): this step cannot start, and
    // says so; the run and its other steps go on.
    return {
      error: `cannot open /dev/null for its stdin: ${(e as NodeJS.ErrnoException).code ?? String(e)}`,
    };
  }
  const spawnOnce = (path: string) =>
    spawner.spawn({
      file: path,
      argv: [command, ...request.args],
      env,
      cwd: cwd === process.cwd() ? null : cwd,
      fds: [devNull!, request.stdout, request.stderr, ...request.inheritFds],
    });
  let outcome = spawnOnce(file);
  if ("error" in outcome && outcome.error === "ENOENT" && !command.includes("/")) {
    // A cached lookup whose program has gone since: look again.
    file = resolveCommand(command, cwd, env.PATH, true);
    if (file !== null) outcome = spawnOnce(file);
  }
  if ("error" in outcome) return failed(outcome.error);
  return { process: { pid: outcome.pid, startTicks: outcome.startTicks, exit: outcome.exit } };
}

function startWithNode(request: StartRequest): Promise<StartResult> {
  const child = spawn(request.command, request.args, {
    cwd: request.cwd,
    env: request.env,
    detached: true,
    stdio: ["ignore", request.stdout, request.stderr, ...request.inheritFds],
  });
  const exit = new Promise<ProcessExit>((resolve) =>
    child.on("exit", (exitCode, signal) => resolve({ exitCode, signal })),
  );
  return new Promise((resolve) => {
    child.once("spawn", () => resolve({ process: { pid: child.pid!, exit } }));
    child.once("error", (e: NodeJS.ErrnoException) => resolve({ error: e.message }));
  });
}
