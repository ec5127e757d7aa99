/**
 * A FIFO named as an input (`--check f`, `--inventory f`, `compile f`, `run f` after `mkfifo f`),
 * read without ever blocking. A blocking open(2) waits for a writer for good: with nobody writing,
 * gpuplan hung and Ctrl-C was the only way out. Opened non-blocking, it is read as its writer
 * writes, and with nothing written within FIFO_WRITER_WAIT_MS it is a located error — the bound
 * `compile -o FIFO` gives a reader (plan/write-atomic.ts).
 */
import { closeSync, constants, openSync, readSync } from "node:fs";
import { UsageError } from "../problems/errors.js";
import { errnoOf } from "../problems/file-errors.js";

/** How long a FIFO is given to find its writer: `cat plan.json > f & gpuplan run f` starts them in either order. */
const FIFO_WRITER_WAIT_MS = 2000;
/** The longest pause between reads; a writer that fills the pipe at once is read again after 1 ms. */
const MAX_POLL_MS = 10;

const pause = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The FIFO's bytes up to its writer's end, at most `max`. A read of 0 bytes before anything was
 * written is "no writer yet", not the end: a writer that opens it later is still waited for.
 */
export async function readFifo(
  file: string,
  what: string,
  max: number,
  tooLarge: () => Error,
): Promise<Buffer> {
  const fd = openSync(file, constants.O_RDONLY | constants.O_NONBLOCK);
  try {
    const chunks: Buffer[] = [];
    let total = 0;
    let writing = false;
    let wait = 1;
    const start = performance.now();
    const chunk = Buffer.allocUnsafe(64 * 1024);
    for (;;) {
      let n: number;
      try {
        n = readSync(fd, chunk, 0, chunk.length, null);
      } catch (e) {
        // EAGAIN: a writer has it open and has not written more yet.
        if (errnoOf(e) !== "EAGAIN") throw e;
        writing = true;
        await pause(wait);
        wait = Math.min(wait * 2, MAX_POLL_MS);
        continue;
      }
      if (n > 0) {
        writing = true;
        wait = 1;
        total += n;
        if (total > max) throw tooLarge();
        chunks.push(Buffer.from(chunk.subarray(0, n)));
        continue;
      }
      if (writing) break;
      if (performance.now() - start >= FIFO_WRITER_WAIT_MS)
        throw new UsageError(
          `cannot read ${what} ${file}: it is a FIFO and nothing wrote to it within ${FIFO_WRITER_WAIT_MS / 1000} s`,
          "unreadable-file",
          "start its writer first (or within that time), or name a regular file",
        );
      await pause(MAX_POLL_MS);
    }
    return Buffer.concat(chunks, total);
  } finally {
    closeSync(fd);
  }
}
