/**
 * Writing to something that is not a regular file — a FIFO, a pipe, a socket, a device: what
 * `--events` may name — without ever blocking the event loop. A reader that falls behind (or is
 * not there yet) would hold a blocking write, and with it the whole run: its steps, their
 * timeouts, the lock waits, Ctrl-C. So the descriptor is non-blocking, what the reader has not
 * taken waits in a bounded backlog and is offered again on a timer, and once the backlog is full
 * new lines are dropped and reported (`lost`), like a write the disk refuses. At the end the backlog
 * gets a short, bounded time to go out; what is left is lost, never waited for.
 */
import { closeSync, constants, openSync, writeSync } from "node:fs";
import { errnoOf } from "../../problems/file-errors.js";

/** What may wait for a slow reader; past it, new lines are dropped. */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
/** How often a backlog is offered again (and a FIFO without a reader opened again). */
const RETRY_MS = 25;

export interface StreamTarget {
  /** Whole lines: sent, kept for later, or dropped (reported to `lost`) when the backlog is full. */
  write(text: string): void;
  /** Offer the backlog for at most `limitMs`, then close; what is left is reported to `lost`. */
  close(limitMs: number): Promise<void>;
}

export interface StreamTargetOptions {
  /** Where something could not be written; called for every loss (the caller says it once). */
  lost: (e: unknown) => void;
  /** Default MAX_BACKLOG_BYTES. */
  maxBacklogBytes?: number;
}

/** Open `path` without blocking: a FIFO nobody reads yet is not an error. */
export function openStreamPath(path: string): number | null {
  try {
    return openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NONBLOCK);
  } catch (e) {
    // ENXIO: a FIFO with no reader (yet); a socket path, which open() never accepts, says the same.
    if (errnoOf(e) === "ENXIO") return null;
    throw e;
  }
}

/** `fd`: opened non-blocking (openStreamPath), or null while a FIFO has no reader. */
export function createStreamTarget(
  path: string,
  fd: number | null,
  options: StreamTargetOptions,
): StreamTarget {
  const maxBacklog = options.maxBacklogBytes ?? MAX_BACKLOG_BYTES;
  const queue: Buffer[] = [];
  let queued = 0;
  /** How much of queue[0] is out already. */
  let offset = 0;
  /** Past an error other than "not now" (EPIPE: the reader left), everything is dropped. */
  let broken = false;
  let timer: NodeJS.Timeout | undefined;

  const schedule = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      pump();
    }, RETRY_MS).unref();
  };
  const fail = (e: unknown) => {
    broken = true;
    queue.length = 0;
    queued = 0;
    offset = 0;
    options.lost(e);
  };
  const pump = () => {
    if (broken) return;
    if (fd === null) {
      try {
        fd = openStreamPath(path);
      } catch (e) {
        fail(e);
        return;
      }
      if (fd === null) {
        if (queue.length > 0) schedule();
        return;
      }
    }
    while (queue.length > 0) {
      const head = queue[0]!;
      try {
        offset += writeSync(fd, head, offset);
      } catch (e) {
        if (errnoOf(e) === "EAGAIN") {
          schedule();
          return;
        }
        fail(e);
        return;
      }
      if (offset === head.length) {
        queue.shift();
        queued -= head.length;
        offset = 0;
      }
    }
  };

  return {
    write(text) {
      if (broken) {
        options.lost(new Error("an earlier write to it failed"));
        return;
      }
      const bytes = Buffer.from(text);
      if (queued + bytes.length > maxBacklog) {
        options.lost(
          new Error(
            fd === null
              ? "nobody opened it for reading; events are dropped"
              : `its reader fell behind by over ${Math.round(maxBacklog / (1024 * 1024))} MiB; events are dropped`,
          ),
        );
        return;
      }
      queue.push(bytes);
      queued += bytes.length;
      if (timer === undefined) pump();
    },
    async close(limitMs) {
      const deadline = performance.now() + limitMs;
      pump();
      while (queue.length > 0 && !broken && performance.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        pump();
      }
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (queue.length > 0 && !broken)
        options.lost(
          new Error(
            fd === null
              ? "nobody opened it for reading; events are dropped"
              : `its reader did not take the last events within ${limitMs} ms`,
          ),
        );
      if (fd !== null) closeSync(fd);
      fd = null;
      broken = true;
    },
  };
}
