/**
 * An open file's lines, read a chunk at a time: a run's events.jsonl reaches hundreds of MB (a run
 * of 100,000 steps writes ~130 MB), and read whole it was held three times over — the text, its
 * lines and the events parsed from them (830 MB of memory for 200 MB of events). Only the line
 * being read is kept here; what the caller keeps of it is its business.
 */
import type { FileHandle } from "node:fs/promises";

/** Bytes read at a time. */
const CHUNK_BYTES = 1024 * 1024;

/** A line of the file: its text, or null when it is longer than the reader keeps (its bytes are skipped). */
export interface Line {
  /** 1-based. */
  number: number;
  text: string | null;
}

/**
 * The lines of `handle` (UTF-8, split at \n, which no multi-byte character contains), the last one
 * too when the file does not end in a newline. A line longer than `maxLineBytes` is given as null
 * and never held whole: one line of a garbled or planted file is not a reason to hold all of it.
 */
export async function* readLines(handle: FileHandle, maxLineBytes: number): AsyncGenerator<Line> {
  const chunk = Buffer.alloc(CHUNK_BYTES);
  let parts: Buffer[] = [];
  let partBytes = 0;
  let tooLong = false;
  let number = 0;
  for (;;) {
    const { bytesRead } = await handle.read(chunk, 0, CHUNK_BYTES, null);
    if (bytesRead === 0) break;
    let from = 0;
    for (;;) {
      const nl = chunk.indexOf(10, from);
      const to = nl === -1 || nl >= bytesRead ? bytesRead : nl;
      if (!tooLong) {
        if (partBytes + (to - from) > maxLineBytes) {
          tooLong = true;
          parts = [];
          partBytes = 0;
        } else if (to > from) {
          // Copied: the chunk is read into again.
          parts.push(Buffer.from(chunk.subarray(from, to)));
          partBytes += to - from;
        }
      }
      if (to === bytesRead) break;
      number++;
      yield { number, text: tooLong ? null : Buffer.concat(parts, partBytes).toString("utf8") };
      parts = [];
      partBytes = 0;
      tooLong = false;
      from = nl + 1;
    }
  }
  if (partBytes > 0 || tooLong) {
    number++;
    yield { number, text: tooLong ? null : Buffer.concat(parts, partBytes).toString("utf8") };
  }
}
