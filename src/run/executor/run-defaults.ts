/**
 * The executor's defaults for what the CLI also offers as options (--kill-grace, --cpu-pinning,
 * --spawn): one home, read by the executor for callers that leave them out and by the CLI for
 * its defaults and --help. No imports: the CLI loads it at every start.
 */

/** SIGTERM → SIGKILL delay for a stopped step. */
export const DEFAULT_KILL_GRACE_MS = 5000;

/** GPU steps are pinned to their GPU's local CPUs. */
export const DEFAULT_CPU_PINNING = true;

/** posix_spawn where it works, else Node's child_process. */
export const DEFAULT_SPAWN = "auto" as const;
