/**
 * Node writes to a terminal synchronously, so a terminal that stops reading — Ctrl-S (XOFF), an
 * ssh connection that stalls — held every write, and with it the whole run: no timeout fired, no
 * step was reaped or started, no GPU slot was given back, until the terminal read again (a 3 s
 * timeout went off after 8 s behind an 8 s Ctrl-S). While a run's view draws on a terminal, its
 * writes go without blocking; what then waits is bounded by the views themselves (the plain view:
 * output-backlog.ts; the live view draws no new frame while one waits).
 *
 * Safe for the other processes on the terminal only because libuv opened it anew for this process
 * (uv_tty_init reopens a pty's slave and puts it in place of the descriptor, close-on-exec): the
 * non-blocking flag then belongs to gpuplan's own open file, not to the one the shell and the rest
 * of the terminal share, where it would outlive gpuplan (a `kill -9`) and make their writes fail
 * with EAGAIN. Where libuv could not reopen it, writes stay blocking, as before.
 */
import { readFileSync } from "node:fs";

/** In /proc/self/fdinfo's octal flags: the descriptor is close-on-exec, which libuv's reopen sets. */
const CLOSE_ON_EXEC = 0o2000000;

interface TtyHandle {
  setBlocking(blocking: boolean): number;
}

/**
 * Write to `stream` without blocking while a view draws, where it is a terminal libuv reopened;
 * returns what puts blocking writes back (once what waits has been written).
 */
export function writeWithoutBlocking(
  stream: NodeJS.WritableStream & { isTTY?: boolean; fd?: number },
  fdInfo: (fd: number) => string | null = readFdInfo,
): () => Promise<void> {
  const handle = (stream as { _handle?: Partial<TtyHandle> })._handle;
  const fd = stream.fd;
  const done = () => Promise.resolve();
  if (!stream.isTTY || typeof fd !== "number" || typeof handle?.setBlocking !== "function") return done;
  if (!isOwnOpen(fdInfo(fd)) || handle.setBlocking(false) !== 0) return done;
  return async () => {
    // Whatever waits goes out first (writes complete in order), then blocking again: the last
    // words written after this must not be lost to an exit with writes still queued.
    await new Promise<void>((resolve) => stream.write("", () => resolve()));
    handle.setBlocking?.(true);
  };
}

/** Whether fdinfo's flags say close-on-exec: the terminal opened anew by libuv, never a shell's. */
export function isOwnOpen(info: string | null): boolean {
  const flags = info === null ? null : /^flags:\s*([0-7]+)$/m.exec(info);
  return flags !== null && (Number.parseInt(flags[1]!, 8) & CLOSE_ON_EXEC) !== 0;
}

function readFdInfo(fd: number): string | null {
  try {
    return readFileSync(`/proc/self/fdinfo/${fd}`, "latin1");
  } catch {
    // Not Linux, or no /proc: nothing tells whose open it is.
    return null;
  }
}
