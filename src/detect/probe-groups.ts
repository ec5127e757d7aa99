/**
 * Each probe child runs in a process group of its own (spawned detached), so that whatever a
 * broken or hostile vendor library starts — a helper it forks, a daemon it spawns — ends with
 * the child: the group is killed with SIGKILL when the child exits, is killed at the deadline,
 * when gpuplan exits, and when gpuplan is interrupted (SIGINT, SIGTERM, SIGHUP), since a
 * detached group no longer receives the terminal's Ctrl-C. The child's own PR_SET_PDEATHSIG
 * still covers a gpuplan killed with SIGKILL; a process that leaves the group (setsid) on
 * purpose is out of reach without cgroups.
 */

import type { ChildProcess } from "node:child_process";

/** How long a probe child that has answered, or been let go, may take over its libraries' shutdown calls. */
export const SHUTDOWN_GRACE_MS = 2_000;

const live = new Set<number>();
const SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
let hooked = false;

/** Track a newly spawned probe child's group (its pid, as it leads the group). */
export function trackGroup(pid: number): void {
  live.add(pid);
  if (!hooked) hook();
}

/** SIGKILL the whole group and stop tracking it (safe to call again, or for a group already gone). */
export function killGroup(pid: number): void {
  try {
    process.kill(-pid, "SIGKILL");
  } catch {
    // ESRCH: nobody is left in the group.
  }
  live.delete(pid);
  if (live.size === 0) unhook();
}

/**
 * Let a serving child go: its stdin ends, so it runs its libraries' shutdown calls and exits;
 * after the grace period its group is killed, whatever it is doing (with anything a library left
 * in it, should the child itself have exited).
 */
export function letGo(child: ChildProcess): void {
  child.stdin?.end();
  setTimeout(() => child.pid !== undefined && killGroup(child.pid), SHUTDOWN_GRACE_MS).unref();
}

function killAll(): void {
  for (const pid of [...live]) killGroup(pid);
}

function onSignal(signal: NodeJS.Signals): void {
  killAll();
  unhook();
  // Alone on this signal, act as Node would have without a listener: die of it. Otherwise the
  // other listener (`gpuplan run`'s interrupt handling) decides.
  if (process.listenerCount(signal) === 0) process.kill(process.pid, signal);
}

function hook(): void {
  hooked = true;
  process.on("exit", killAll);
  for (const s of SIGNALS) process.on(s, onSignal);
}

function unhook(): void {
  if (!hooked) return;
  hooked = false;
  process.off("exit", killAll);
  for (const s of SIGNALS) process.off(s, onSignal);
}
