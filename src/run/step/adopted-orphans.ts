/**
 * gpuplan as PID 1 — a container's entry point (`docker run IMAGE gpuplan run …` without
 * `--init`), a pid namespace of its own — is the parent the kernel gives every orphan of the
 * steps: a shell's background job, the DataLoader workers of a step killed at its timeout. Nothing
 * else reaps them there: each stayed a zombie, holding its pid, until the container ended (one per
 * such step; a long run fills the container's pids limit, then every fork fails).
 *
 * On each SIGCHLD, the zombies among gpuplan's children that it did not start are reaped. Every
 * process gpuplan starts either leads a session of its own (steps, probe children, warm workers)
 * or stays in gpuplan's (sbatch, squeue), so a zombie child that is in another session without
 * leading it was adopted. Reaped by pid with waitpid(2), never waitpid(-1): libuv and
 * posix-spawn.ts reap their own children by pid, and must still find them.
 */
import { loadLibc } from "../../libc/libc.js";
import { procStatFields } from "./process-group.js";
import { procPids } from "./step-session.js";

const WNOHANG = 1;

/**
 * Reap adopted orphans while the run lasts, where gpuplan is PID 1 on Linux; returns what stops
 * it. Elsewhere an orphan goes to init (or a subreaper), which reaps it, and nothing is done.
 */
export async function reapAdoptedOrphans(pid = process.pid): Promise<() => void> {
  if (process.platform !== "linux" || pid !== 1) return () => {};
  const session = procStatFields("self")?.[3];
  if (session === undefined) return () => {};
  const libc = await loadLibc();
  const waitpid = libc.func<(pid: number, status: Int32Array, options: number) => number>(
    "int waitpid(int pid, _Out_ int *status, int options)",
  );
  const status = new Int32Array(1);
  const reap = () => {
    for (const child of adoptedZombies(String(pid), session)) waitpid(child, status, WNOHANG);
  };
  process.on("SIGCHLD", reap);
  return () => {
    process.off("SIGCHLD", reap);
  };
}

/**
 * The zombies whose parent is `parent` and that are in a session other than `ownSession` without
 * leading it: children `parent` never started (see the header). From one pass over /proc.
 */
function adoptedZombies(parent: string, ownSession: string): number[] {
  const found: number[] = [];
  for (const name of procPids()) {
    // [state, ppid, pgrp, session, …]
    const fields = procStatFields(name);
    if (fields === null || fields[0] !== "Z" || fields[1] !== parent) continue;
    if (fields[3] !== ownSession && fields[3] !== name) found.push(Number(name));
  }
  return found;
}
