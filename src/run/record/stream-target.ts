/**
 * Writing to something that is not a regular file — a FIFO, a pipe, a socket, a device: what
 * `--events` may name — without ever blocking the event loop. A reader that falls behind (or is
 * not there yet) would hold a blocking write, and with it the whole run: its steps, their
 * timeouts, the lock waits, Ctrl-C. So the descriptor is non-blocking and what the reader has not
 * taken yet waits: in memory up to a bound, and past it as byte ranges of the run's own events
 * file (`replay`), which holds the same lines already, read back when the reader catches up. A
 * slow reader thus loses nothing and costs neither memory nor the steps' time; at the end the
 * run waits for it as any Unix writer waits for a slow pipe (Ctrl-C stops the wait). Only a
 * reader that went away (EPIPE), another write error, or a FIFO nobody ever opened loses events
 * (`lost`). A descriptor gpuplan was started with and cannot open anew (a socket as stdout: open()
 * of /proc/self/fd/1 says ENXIO) is written through a `StreamSink` instead, one write in flight at
 * a time, so the same backlog holds what its reader has not taken.
 */
import { closeSync, constants, openSync, writeSync } from "node:fs";
import { errnoOf } from "../../problems/file-errors.js";
import { formatSize } from "../../units/size.js";

/** What may wait in memory for a slow reader; past it, the rest is read back from the events file. */
const MAX_BACKLOG_BYTES = 8 * 1024 * 1024;
/** How often a backlog is offered again (and a FIFO without a reader opened again). */
const RETRY_MS = 25;
/** How much of the events file is read back at a time. */
const REPLAY_CHUNK_BYTES = 64 * 1024;

/**
 * A stream of gpuplan's own (its stdout, a socket descriptor it was handed) that takes bytes
 * without blocking and says when it has taken them: `done` once they are out (or with the error;
 * the reader leaving is EPIPE). Never handed more than one write at a time.
 */
export interface StreamSink {
  write(bytes: Buffer, done: (error: Error | null) => void): void;
}

/** The run's own events file, read back at a byte offset (`pread`): how many bytes it gave. */
export type Replay = (into: Buffer, position: number) => number;

interface StreamCloseOptions {
  /**
   * How long a FIFO that nobody ever opened for reading is given to find a reader, and a reader
   * is given at all when `stop` is aborted already (an interrupted run ends promptly).
   */
  graceMs: number;
  /** Stops waiting for a slow reader (Ctrl-C); what it has not taken then is reported to `lost`. */
  stop?: AbortSignal;
  /** How long to wait before `onWait` is told (default 1 s). */
  waitNoticeMs?: number;
  /** Told once, when the reader has kept the end waiting for `waitNoticeMs`: the bytes it has yet to take. */
  onWait?: (pendingBytes: number) => void;
}

export interface StreamTarget {
  /**
   * Whole lines: sent now or kept for later. `at`: where these very bytes start in the run's own
   * events file (`replay`), or null where that file does not hold them (its write failed).
   */
  write(text: string, at?: number | null): void;
  /** Wait until the reader has taken everything (see StreamCloseOptions), then close. */
  close(options: StreamCloseOptions): Promise<void>;
}

export interface StreamTargetOptions {
  /** Where something could not be written; called for every loss (the caller says it once). */
  lost: (e: unknown) => void;
  /** Default MAX_BACKLOG_BYTES. */
  maxBacklogBytes?: number;
  /** The run's own events file, where what does not fit in memory is read back from. */
  replay?: Replay;
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

/** Waiting bytes: held in memory, or a range of the events file to read back. */
type Segment = { bytes: Buffer } | { from: number; to: number };

const sizeOf = (s: Segment) => ("bytes" in s ? s.bytes.length : s.to - s.from);

/**
 * `to`: a descriptor opened non-blocking (openStreamPath), null while a FIFO has no reader, or a
 * sink (a stream gpuplan already has).
 */
export function createStreamTarget(
  path: string,
  to: number | null | StreamSink,
  options: StreamTargetOptions,
): StreamTarget {
  const sink = typeof to === "object" && to !== null ? to : null;
  let fd = typeof to === "number" ? to : null;
  /** A sink's write not yet taken: nothing more is handed to it until then. */
  let inFlight = false;
  const maxBacklog = options.maxBacklogBytes ?? MAX_BACKLOG_BYTES;
  const queue: Segment[] = [];
  /** Bytes waiting in memory (the bound), and in all (what the reader has yet to take). */
  let inMemory = 0;
  let pending = 0;
  /** How much of queue[0] is out already. */
  let offset = 0;
  /** Past an error other than "not now" (EPIPE: the reader left), everything is dropped. */
  let broken = false;
  let timer: NodeJS.Timeout | undefined;
  let scratch: Buffer | undefined;

  const schedule = () => {
    timer ??= setTimeout(() => {
      timer = undefined;
      pump();
    }, RETRY_MS).unref();
  };
  const fail = (e: unknown) => {
    broken = true;
    queue.length = 0;
    inMemory = 0;
    pending = 0;
    offset = 0;
    options.lost(
      errnoOf(e) === "EPIPE" || errnoOf(e) === "ECONNRESET"
        ? new Error(`its reader went away (${errnoOf(e)}); later events are not sent`)
        : e,
    );
  };
  /** The head segment's next bytes to send; null when the events file no longer has them. */
  const nextBytes = (head: Segment): Buffer | null => {
    if ("bytes" in head) return head.bytes.subarray(offset);
    scratch ??= Buffer.allocUnsafe(REPLAY_CHUNK_BYTES);
    const want = Math.min(scratch.length, head.to - head.from - offset);
    const got = options.replay!(scratch.subarray(0, want), head.from + offset);
    return got > 0 ? scratch.subarray(0, got) : null;
  };
  const pump = () => {
    if (broken) return;
    if (sink === null && fd === null) {
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
      let written: number;
      try {
        const bytes = nextBytes(head);
        if (bytes === null) {
          fail(new Error("the run's events file no longer holds the events its reader had yet to take"));
          return;
        }
        if (sink !== null) {
          if (inFlight) return;
          written = send(sink, bytes, "bytes" in head);
        } else written = writeSync(fd!, bytes);
      } catch (e) {
        if (errnoOf(e) === "EAGAIN") {
          schedule();
          return;
        }
        fail(e);
        return;
      }
      offset += written;
      pending -= written;
      if (offset === sizeOf(head)) {
        queue.shift();
        if ("bytes" in head) inMemory -= head.bytes.length;
        offset = 0;
      }
    }
  };
  /** Hand bytes to the sink; they count as taken, and the next are handed over once it says so. */
  const send = (target: StreamSink, bytes: Buffer, own: boolean): number => {
    inFlight = true;
    // The read-back buffer is reused for the next chunk: the sink gets a copy of its bytes.
    target.write(own ? bytes : Buffer.from(bytes), (error) => {
      inFlight = false;
      if (broken) return;
      if (error) fail(error);
      else pump();
    });
    return bytes.length;
  };
  const enqueue = (text: string, at: number | null) => {
    const size = Buffer.byteLength(text);
    const tail = queue.at(-1);
    // Once anything waits in the file, what follows waits there too (memory stays bounded).
    const spilling = inMemory + size > maxBacklog || (tail !== undefined && !("bytes" in tail));
    if (spilling && at !== null && options.replay) {
      if (tail !== undefined && !("bytes" in tail) && tail.to === at) tail.to += size;
      else queue.push({ from: at, to: at + size });
    } else if (inMemory + size <= maxBacklog) {
      queue.push({ bytes: Buffer.from(text) });
      inMemory += size;
    } else {
      options.lost(
        new Error(
          sink === null && fd === null
            ? "nobody opened it for reading, and over " +
                `${Math.round(maxBacklog / (1024 * 1024))} MiB of events waited; events are dropped`
            : `its reader fell behind by over ${Math.round(maxBacklog / (1024 * 1024))} MiB, ` +
                "and the run's events file does not hold the rest; events are dropped",
        ),
      );
      return;
    }
    pending += size;
  };

  return {
    write(text, at = null) {
      if (broken) {
        options.lost(new Error("an earlier write to it failed"));
        return;
      }
      enqueue(text, at);
      if (timer === undefined) pump();
    },
    async close({ graceMs, stop, waitNoticeMs = 1000, onWait }) {
      const started = performance.now();
      const graceOnly = stop?.aborted === true;
      let told = false;
      pump();
      const hasReader = () => sink !== null || fd !== null;
      while ((queue.length > 0 || inFlight) && !broken && (graceOnly || !stop?.aborted)) {
        const waited = performance.now() - started;
        // A FIFO nobody opened has no reader to wait for: a short grace, then it is given up.
        if ((!hasReader() || graceOnly) && waited >= graceMs) break;
        if (!told && hasReader() && waited >= waitNoticeMs) {
          told = true;
          onWait?.(pending);
        }
        await new Promise((resolve) => setTimeout(resolve, RETRY_MS));
        pump();
      }
      if (timer !== undefined) clearTimeout(timer);
      timer = undefined;
      if (queue.length > 0 && !broken)
        options.lost(
          new Error(
            !hasReader()
              ? "nobody opened it for reading; events are dropped"
              : `stopped while its reader had ${formatSize(pending)} of events yet to take`,
          ),
        );
      if (fd !== null) closeSync(fd);
      fd = null;
      broken = true;
    },
  };
}
