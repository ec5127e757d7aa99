/**
 * Reading a file the user named, apart from parsing it (source-file.ts loads js-yaml): `gpuplan
 * run plan.json` reads its plan with JSON.parse and never loads the YAML parser.
 */
import { closeSync, fstatSync, openSync, readSync, statSync } from "node:fs";
import { UsageError } from "../problems/errors.js";
import { fileError } from "../problems/file-errors.js";
import { readFifo } from "./read-fifo.js";

export interface SourceFile {
  /** The path as the user gave it. */
  file: string;
  text: string;
}

/**
 * The most gpuplan reads of one file: the longest string V8 holds (2^29 − 24 characters; no more
 * bytes than that can make a longer one), ~512 MiB. A pipeline of 20,000 × 10 steps is ~10 MB, its
 * plan ~80 MB. A FIFO or a device that never ends (`/dev/zero`) stops here instead of eating memory.
 */
export const MAX_SOURCE_BYTES = 2 ** 29 - 24;

/**
 * Read a file for the user; a missing or unreadable file is a usage error (exit 2). Read at once:
 * nothing else runs meanwhile, and node:fs/promises would cost a compile ~2 ms of start (#17).
 * A FIFO (`<(generate-pipeline)`) is read to its end; a device or a socket is refused.
 */
export async function readSourceText(file: string, what: string, limit?: SizeLimit): Promise<string> {
  // Looked at before it is opened: open(2) of a FIFO waits for a writer, for good when none comes.
  if (isFifo(file)) {
    try {
      const tooLarge = () => limit?.tooLarge(undefined) ?? tooLargeError(file, what);
      return (await readFifo(file, what, limit?.bytesFor(0) ?? MAX_SOURCE_BYTES, tooLarge)).toString("utf8");
    } catch (e) {
      throw e instanceof UsageError ? e : fileError(e, file, "read", what);
    }
  }
  let fd: number;
  try {
    fd = openSync(file, "r");
  } catch (e) {
    throw fileError(e, file, "read", what);
  }
  try {
    const stat = fstatSync(fd);
    // A terminal is read to its end (Ctrl-D), as `compile -` reads one: `compile /dev/stdin`.
    if ((stat.isCharacterDevice() && !(await isTerminal(fd))) || stat.isBlockDevice() || stat.isSocket())
      throw new UsageError(
        `cannot read ${what} ${file}: it is a device, not a file`,
        "unreadable-file",
        "name a file (a FIFO such as <(command) is read to its end)",
      );
    const tooLarge = (size?: number) => limit?.tooLarge(size) ?? tooLargeError(file, what);
    const expected = stat.isFile() ? stat.size : 0;
    return readAll(fd, expected, limit?.bytesFor(expected) ?? MAX_SOURCE_BYTES, tooLarge).toString("utf8");
  } catch (e) {
    throw e instanceof UsageError ? e : fileError(e, file, "read", what);
  } finally {
    closeSync(fd);
  }
}

/** Whether the path names a FIFO; any doubt (missing, no access) is left to open(2) to say. */
function isFifo(file: string): boolean {
  try {
    return statSync(file).isFIFO();
  } catch {
    return false;
  }
}

/**
 * A reader's own limit below MAX_SOURCE_BYTES (a plan's, src/plan/plan-size.ts) and its refusal,
 * given the file's size when it is known before reading.
 */
export interface SizeLimit {
  /** The most bytes read of a file whose size is `expected` (0: unknown, a FIFO). */
  bytesFor: (expected: number) => number;
  tooLarge: (size: number | undefined) => Error;
}

/** The whole file, `expected` bytes or however many a FIFO (or /proc) gives, at most `max`. */
function readAll(fd: number, expected: number, max: number, tooLarge: (size?: number) => Error): Buffer {
  // Said before anything is read: a file too big to hold is never read, let alone parsed.
  if (expected > max) throw tooLarge(expected);
  const chunks: Buffer[] = [];
  let total = 0;
  // One read for a regular file of the size fstat told (plus a byte to see it did not grow).
  let chunk = Buffer.allocUnsafe(Math.max(64 * 1024, expected + 1));
  for (;;) {
    const n = readSync(fd, chunk, 0, chunk.length, null);
    if (n === 0) break;
    total += n;
    if (total > max) throw tooLarge();
    chunks.push(chunk.subarray(0, n));
    if (n === chunk.length) chunk = Buffer.allocUnsafe(Math.min(chunk.length * 2, 64 * 1024 * 1024));
    else chunk = chunk.subarray(n);
  }
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks, total);
}

/** Standard input (`compile -`), as a file is read: a device that is not a terminal refused, at most MAX_SOURCE_BYTES. */
export async function readStdinText(what: string): Promise<string> {
  const name = "standard input";
  const stat = fstatSync(0);
  if ((stat.isCharacterDevice() && !(await isTerminal(0))) || stat.isBlockDevice())
    throw new UsageError(
      `cannot read ${what} from ${name}: it is a device, not a file`,
      "unreadable-file",
      "redirect a file or a pipe into it",
    );
  // `< folder` opens a folder on Linux; its stream ended at once, read as an empty pipeline file.
  if (stat.isDirectory())
    throw new UsageError(
      `cannot read ${what} from ${name}: it is a folder, not a file`,
      "unreadable-file",
      "redirect a file into it, not a folder",
    );
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of process.stdin) {
    total += (chunk as Buffer).length;
    if (total > MAX_SOURCE_BYTES) {
      process.stdin.destroy();
      throw tooLargeError(name, what);
    }
    chunks.push(chunk as Buffer);
  }
  return Buffer.concat(chunks, total).toString("utf8");
}

/** node:tty brings Node's streams and net (~2 ms of start, #17): loaded only for a character device. */
async function isTerminal(fd: number): Promise<boolean> {
  return process.getBuiltinModule("node:tty").isatty(fd);
}

function tooLargeError(file: string, what: string): UsageError {
  return new UsageError(
    `cannot read ${what} ${file}: it is larger than ${MAX_SOURCE_BYTES} bytes (512 MiB), the most gpuplan reads of a file`,
    "unreadable-file",
    "gpuplan reads each file whole: split the pipeline file, or check that the path names the file you meant",
  );
}
