/**
 * Runs a Slurm client command (sinfo, scontrol, sbatch …) for the core: no shell, a time limit,
 * a cap on what it may print, and the caller's environment (so SLURM_CONF applies).
 */
import { execFile } from "node:child_process";
import type { CommandOutput, RunCommand } from "./read-cluster.js";

const MAX_OUTPUT = 64 * 1024 * 1024;

export function slurmCommandRunner(env: NodeJS.ProcessEnv, timeoutMs: number): RunCommand {
  return (command, args) =>
    new Promise<CommandOutput>((resolve) => {
      execFile(
        command,
        [...args],
        { env, timeout: timeoutMs, maxBuffer: MAX_OUTPUT, encoding: "utf8", windowsHide: true },
        (err, stdout, stderr) => {
          if (!err) return resolve({ status: 0, stdout, stderr });
          const e = err as NodeJS.ErrnoException & { killed?: boolean; code?: string | number };
          const failure: CommandOutput["failure"] =
            e.code === "ENOENT"
              ? "not-found"
              : e.code === "ERR_CHILD_PROCESS_STDIO_MAXBUFFER"
                ? "output-too-large"
                : e.killed
                  ? "timeout"
                  : undefined;
          if (failure) return resolve({ status: null, stdout, stderr, failure });
          resolve({ status: typeof e.code === "number" ? e.code : null, stdout, stderr });
        },
      );
    });
}
