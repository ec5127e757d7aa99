/**
 * A Slurm run's merged events.jsonl put in time order once the run is over: the follower appends
 * each task's events as it reads them, so lines of tasks on different nodes interleave out of
 * order. The file can be larger than one string may be (a run of 100,000 steps writes hundreds of
 * MiB; V8 refuses a string past 512 MiB, which ended such a run with an internal error), so it is
 * never read whole: one pass notes where each line starts and its timestamp, and only a file not
 * already in order is rewritten, line runs copied from where they are, in pieces.
 */
import { closeSync, constants, openSync, readSync } from "node:fs";
import { writeFileAtomic } from "../../plan/write-atomic.js";
import { errnoOf } from "../../problems/file-errors.js";

const CHUNK_BYTES = 4 << 20;
/** An event line starts `{"ts":"2026-11-29T07:08:03.123Z"`: its first bytes hold the timestamp. */
const PREFIX_BYTES = 64;
const TS = /^\{"ts":"([^"]+)"/;
/**
 * No event is anywhere near this long (the follower passes over a task's line past 4 MiB): a file
 * holding such a line is not one gpuplan wrote whole, and is left in the order it has rather than
 * copied line by line into strings that may not be made so long.
 */
const MAX_LINE_BYTES = 16 << 20;

interface LineIndex {
  starts: number[];
  /** Without the newline. */
  lengths: number[];
  ts: string[];
  inOrder: boolean;
  longest: number;
}

/**
 * Sort the events file at `path` by timestamp, stably (lines of one moment keep their order; a
 * line without one sorts first), dropping empty lines. A missing file is left missing (removed
 * with its run folder: records-incomplete says so).
 */
export async function sortEventsFile(path: string): Promise<void> {
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (e) {
    if (errnoOf(e) === "ENOENT") return;
    throw e;
  }
  try {
    const index = indexLines(fd);
    if (index.inOrder || index.longest > MAX_LINE_BYTES) return;
    const order = Uint32Array.from(index.ts.keys());
    const { ts } = index;
    order.sort((a, b) => (ts[a]! < ts[b]! ? -1 : ts[a]! > ts[b]! ? 1 : a - b));
    await writeFileAtomic(path, linesInOrder(fd, index, order), "file", undefined, "chosen");
  } finally {
    closeSync(fd);
  }
}

/** Where each non-empty line starts, how long it is and its timestamp; and whether they are in order. */
function indexLines(fd: number): LineIndex {
  const index: LineIndex = { starts: [], lengths: [], ts: [], inOrder: true, longest: 0 };
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let lineStart = 0;
  let prefix = "";
  const endLine = (end: number) => {
    if (end > lineStart) {
      const ts = TS.exec(prefix)?.[1] ?? "";
      const last = index.ts.length - 1;
      if (last >= 0 && ts < index.ts[last]!) index.inOrder = false;
      index.starts.push(lineStart);
      index.lengths.push(end - lineStart);
      index.longest = Math.max(index.longest, end - lineStart);
      index.ts.push(ts);
    }
    lineStart = end + 1;
    prefix = "";
  };
  for (let offset = 0; ; ) {
    const n = readSync(fd, chunk, 0, CHUNK_BYTES, offset);
    if (n === 0) break;
    for (let i = 0; i < n; ) {
      const nl = chunk.indexOf(0x0a, i);
      const end = nl === -1 || nl >= n ? n : nl;
      if (prefix.length < PREFIX_BYTES)
        prefix += chunk.toString("latin1", i, Math.min(end, i + PREFIX_BYTES - prefix.length));
      if (end === n) break;
      endLine(offset + end);
      i = end + 1;
    }
    offset += n;
    if (n < CHUNK_BYTES) {
      // The last line may lack its newline: it is a line all the same.
      endLine(offset);
      break;
    }
  }
  return index;
}

/** The lines in `order`, each with its newline, read in runs of lines adjacent in the file. */
function* linesInOrder(fd: number, index: LineIndex, order: Uint32Array): Generator<string> {
  const { starts, lengths } = index;
  let pending: string[] = [];
  let pendingBytes = 0;
  for (let k = 0; k < order.length; ) {
    // Lines that follow each other in the file and in the order are read in one go.
    const first = order[k]!;
    let last = first;
    while (
      k + 1 < order.length &&
      order[k + 1] === last + 1 &&
      adjacent(last) &&
      span(first, last + 1) <= CHUNK_BYTES
    )
      last = order[++k]!;
    k++;
    const from = starts[first]!;
    const bytes = starts[last]! + lengths[last]! + 1 - from;
    const buffer = Buffer.allocUnsafe(bytes);
    let got = 0;
    while (got < bytes) {
      const n = readSync(fd, buffer, got, bytes - got, from + got);
      if (n === 0) break;
      got += n;
    }
    // The file's last line may have had no newline; every line written gets one.
    buffer[bytes - 1] = 0x0a;
    pending.push(buffer.toString("utf8"));
    pendingBytes += bytes;
    if (pendingBytes >= CHUNK_BYTES) {
      yield pending.join("");
      pending = [];
      pendingBytes = 0;
    }
  }
  if (pending.length > 0) yield pending.join("");

  /** Whether line i + 1 starts right after line i's newline (no empty line between, which is dropped). */
  function adjacent(i: number): boolean {
    return starts[i + 1] === starts[i]! + lengths[i]! + 1;
  }
  function span(a: number, b: number): number {
    return starts[b]! + lengths[b]! + 1 - starts[a]!;
  }
}
