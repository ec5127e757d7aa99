/**
 * Descriptors gpuplan inherited from whoever started it (a shell's `exec 5>file`, the pipe of
 * `x=$(gpuplan run …)` or of an ssh session, a CI runner's own files) are marked close-on-exec
 * before the first step or warm worker starts, so that none of them reaches a step. Otherwise a
 * daemon a step leaves behind holds the caller's pipe open, and `x=$(gpuplan run …)` or the ssh
 * command waits for that daemon instead of for gpuplan; slurmstepd and systemd close them too.
 * gpuplan's own descriptors are close-on-exec already (Node opens them so), and the slot-lock fds
 * reach a step through dup2, which clears the flag on the step's copy only.
 */
import { readdirSync } from "node:fs";
import { loadLibc } from "../../../libc/libc.js";

const F_GETFD = 1;
const F_SETFD = 2;
const FD_CLOEXEC = 1;

let sealing: Promise<number[]> | undefined;

/** Once per process; resolves to the descriptors it marked (none where the C library cannot be loaded). */
export function closeInheritedFdsOnExec(): Promise<number[]> {
  sealing ??= seal().catch(() => []);
  return sealing;
}

async function seal(): Promise<number[]> {
  const fds = openFds();
  if (fds.length === 0) return [];
  const libc = await loadLibc();
  const fcntl = libc.func<(fd: number, cmd: number, ...rest: unknown[]) => number>(
    "int fcntl(int fd, int cmd, ...)",
  );
  const marked: number[] = [];
  for (const fd of fds) {
    const flags = fcntl(fd, F_GETFD);
    // -1: gone since the listing (the listing's own descriptor was one).
    if (flags < 0 || (flags & FD_CLOEXEC) !== 0) continue;
    if (fcntl(fd, F_SETFD, "int", flags | FD_CLOEXEC) === 0) marked.push(fd);
  }
  return marked;
}

/** The open descriptors above stderr, from the kernel's listing (Linux /proc, else /dev/fd). */
function openFds(): number[] {
  for (const dir of ["/proc/self/fd", "/dev/fd"]) {
    try {
      return readdirSync(dir)
        .map(Number)
        .filter((fd) => Number.isInteger(fd) && fd > 2);
    } catch {
      // Not this system's listing: try the next.
    }
  }
  return [];
}
