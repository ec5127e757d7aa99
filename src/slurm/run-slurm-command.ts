/**
 * Runs a Slurm client command (sinfo, scontrol, sbatch …) for the core: no shell, a time limit,
 * a cap on what it may print, and the caller's environment (so SLURM_CONF applies) less what would
 * change what the command does (command-environment.ts).
 */
import { execFile } from "node:child_process";
import { slurmCommandEnv } from "./command-environment.js";
import { forgetsEveryJob } from "./follow/squeue-tasks.js";
import type { CommandOutput, RunCommand } from "./read-cluster.js";

const MAX_OUTPUT = 64 * 1024 * 1024;

/**
 * How long a command that shows how runs stand (`runs`, `report`, `status`, and the check before a
 * resume) waits for squeue or sacct. Slurm's own clients give up on slurmctld after MessageTimeout
 * (10 s by default) and say why, which this leaves room for; past it the client itself hangs, and
 * the user is told so rather than kept waiting a minute for a listing the run's files can give.
 */
export const QUESTION_TIMEOUT_MS = 15_000;

/** The commands that only read: an interrupt stops them at once (scancel and sbatch run to their end). */
const READS = new Set(["squeue", "sacct", "sinfo", "scontrol"]);

/**
 * `signal` (an interrupt: Ctrl-C, SIGTERM) stops a read under way, which then answers with the
 * failure `interrupted`: a hung squeue must not hold a Ctrl-C for its whole time limit.
 */
export function slurmCommandRunner(
  env: NodeJS.ProcessEnv,
  timeoutMs: number,
  signal?: AbortSignal,
): RunCommand {
  return (command, args, options) =>
    new Promise<CommandOutput>((resolve) => {
      const stoppable = signal !== undefined && READS.has(command);
      if (stoppable && signal.aborted)
        return resolve({ status: null, stdout: "", stderr: "", failure: "interrupted" });
      execFile(
        command,
        [...args],
        {
          env: slurmCommandEnv(command, env, options?.unsetEnv),
          timeout: timeoutMs,
          maxBuffer: MAX_OUTPUT,
          encoding: "utf8",
          windowsHide: true,
          ...(stoppable && { signal }),
        },
        (err, stdout, stderr) => {
          if (!err) return resolve({ status: 0, stdout, stderr });
          const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: string | number };
          const failure: CommandOutput["failure"] =
            e.code === "ENOENT"
              ? "not-found"
              : e.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER"
                ? "output-too-large"
                : e.name === "AbortError"
                  ? "interrupted"
                  : e.killed
                    ? "timeout"
                    : undefined;
          if (failure)
            return resolve({
              status: null,
              stdout,
              stderr,
              failure,
              ...(failure === "timeout" && { limitMs: timeoutMs }),
            });
          resolve({ status: typeof e.code === "number" ? e.code : null, stdout, stderr });
        },
      );
    });
}

/**
 * `run`, except that a read that did not answer (not on PATH, past its time limit, or failed with
 * an exit status: the controller down, accounting disabled) is not asked again: its answer stands
 * for every later call asking the same of other jobs. For one command that asks Slurm about many runs (`gpuplan runs`,
 * `--prune`), where each would otherwise wait out the limit anew (50 Slurm runs with the
 * controller down: 50 minutes) or start its own squeue (3,000 runs: 3,000 squeues, each a
 * connection the controller refuses). squeue's "Invalid job id specified" is that call's answer
 * about its own jobs (forgotten past MinJobAge), never remembered. Calls made while a command's
 * first call is under way wait for its answer first: runs are read several at once, and each
 * would start its own wait.
 */
export function rememberUnanswered(run: RunCommand): RunCommand {
  const unanswered = new Map<string, CommandOutput>();
  const firstCalls = new Map<string, Promise<CommandOutput>>();
  return async (command, args, options) => {
    const key = questionOf(command, args);
    const first = firstCalls.get(key);
    if (first) await first.catch(() => undefined);
    const known = unanswered.get(key);
    if (known) return known;
    const call = run(command, args, options).then((out) => {
      if (isUnanswered(command, out)) unanswered.set(key, out);
      return out;
    });
    if (!first) firstCalls.set(key, call);
    return call;
  };
}

/**
 * What a call asks, less which jobs: calls that differ only in `-j JOBS` ask the same source. Not
 * the command alone: `sacct -X` failing where accounting storage is disabled is exactly when its
 * fallback `sacct -c` (the job completion log, sacct-tasks.ts) must still be asked.
 */
function questionOf(command: string, args: readonly string[]): string {
  return JSON.stringify([command, ...args.map((a, i) => (args[i - 1] === "-j" ? "" : a))]);
}

/** Whether `out` says Slurm cannot be asked at all, rather than answering this call. */
function isUnanswered(command: string, out: CommandOutput): boolean {
  if (out.failure === "timeout" || out.failure === "not-found") return true;
  // scancel and sbatch act: each call's failure is its own. A read's exit status is Slurm's.
  return READS.has(command) && out.failure === undefined && out.status !== 0 && !forgetsEveryJob(out);
}
