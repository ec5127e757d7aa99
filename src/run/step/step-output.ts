/**
 * A step's stdout and stderr are files in the run directory that the step writes itself: no pipe
 * runs through gpuplan, so a step outlives a `kill -9` of gpuplan
 * (docs/decisions/0003-step-output-in-files.md). gpuplan reads the files back: while the step runs, new complete lines go to the view, polled
 * every FOLLOW_MS by one shared timer and only for a view that shows lines (plain, live); when it
 * has ended, the last lines of stderr, for the OOM classification and the failure report.
 */
import { closeSync, constants, fstatSync, mkdirSync, openSync, readSync, unlinkSync } from "node:fs";
import { dirname } from "node:path";
import { StringDecoder } from "node:string_decoder";

/** How often followed files are read while their steps run (the views batch lines for 20 ms too). */
const FOLLOW_MS = 25;
/** Read per file per poll at most, so a step that prints fast cannot stall the event loop. */
const MAX_BYTES_PER_POLL = 1 << 20;
/** Unread output beyond which a view skips ahead (catchUp), and how much of the end it then shows. */
const MAX_BACKLOG_BYTES = 16 << 20;
const KEEP_BYTES = 1 << 20;
/** A line longer than this is shown in pieces. */
const MAX_LINE_CHARS = 64 * 1024;
/** The end of stderr read back for its last lines. */
const TAIL_BYTES = 64 * 1024;

const chunk = Buffer.allocUnsafe(64 * 1024);
const madeDirs = new Set<string>();

/** mkdir -p, once per directory per process: every step of a pipeline shares one. */
export function ensureDir(dir: string): void {
  if (madeDirs.has(dir)) return;
  mkdirSync(dir, { recursive: true });
  madeDirs.add(dir);
}

/**
 * Opens (creating) a step's output file, as "a+": O_APPEND keeps lines whole when a step and its
 * grandchildren write at once. Synchronous on purpose: through libuv's pool, short steps waited
 * for a free thread (docs/decisions/0003-step-output-in-files.md). O_NOFOLLOW: a resumed attempt's
 * log name is known in advance, and a link planted under it would have the step's output appended
 * to whatever it points at (ELOOP, which the caller says as a symbolic link).
 */
export function openOutput(path: string): number {
  return openSync(
    path,
    constants.O_RDWR | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW,
    0o666,
  );
}

/**
 * openOutput, making the log's own folder again when it is gone: someone tidying up (`rm -rf
 * RUN/logs`) or a step removed it while the run ran, and every later step failed to start on
 * ENOENT. Only that last level is made: a removed run folder is not made again around it (a folder
 * of logs without its journal would pass for a run); the step then fails to start, saying why.
 */
export function openOutputInFolder(path: string): number {
  try {
    return openOutput(path);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "ENOENT") throw e;
    try {
      mkdirSync(dirname(path));
    } catch (made) {
      if ((made as NodeJS.ErrnoException).code !== "EEXIST") throw made;
    }
    return openOutput(path);
  }
}

export class OutputFile {
  /** Read and write (appending): the step gets a copy as its fd 1 or 2, gpuplan reads it back. */
  readonly fd: number;
  /** What the file held before this step: never shown again as its output, never its tail. */
  private start: number;
  private position: number;
  private partial = "";
  private readonly decoder = new StringDecoder("utf8");
  private closed = false;

  constructor(
    readonly path: string,
    fd: number,
    private readonly onLine: ((line: string) => void) | null,
  ) {
    this.fd = fd;
    this.start = fstatSync(fd).size;
    this.position = this.start;
  }

  /**
   * Emits the complete lines appended since the last read, at most `limit` bytes of them; true
   * when it stopped at the limit (more may be waiting).
   */
  pump(limit = Number.POSITIVE_INFINITY): boolean {
    if (this.onLine === null || this.closed) return false;
    let read = 0;
    while (read < limit) {
      const n = readSync(this.fd, chunk, 0, chunk.length, this.position);
      if (n === 0) {
        // Nothing new, or the file was cut back behind us: asked only then, not at every read.
        if (read === 0 && this.noticeTruncation()) continue;
        return false;
      }
      this.position += n;
      read += n;
      const lines = (this.partial + this.decoder.write(chunk.subarray(0, n))).split("\n");
      this.partial = lines.pop() ?? "";
      // A line that never ends (a progress bar redrawn with \r) is shown in pieces, not hoarded.
      while (this.partial.length > MAX_LINE_CHARS) {
        lines.push(this.partial.slice(0, MAX_LINE_CHARS));
        this.partial = this.partial.slice(MAX_LINE_CHARS);
      }
      for (const line of lines) this.onLine(line);
    }
    return true;
  }

  /**
   * A step that prints faster than a view can show: when more than MAX_BACKLOG_BYTES wait
   * unread, the view skips to the last KEEP_BYTES and says so. The file keeps every byte.
   */
  catchUp(): void {
    if (this.onLine === null || this.closed) return;
    const waiting = fstatSync(this.fd).size - this.position;
    if (waiting <= MAX_BACKLOG_BYTES) return;
    const skipped = waiting - KEEP_BYTES;
    this.position += skipped;
    this.partial = "";
    this.decoder.end();
    this.onLine(
      `[gpuplan: ${(skipped / 1048576).toFixed(1)} MiB of output not shown; ${this.path} has all of it]`,
    );
  }

  /** The step has ended: the rest, an unterminated last line included. */
  finish(): void {
    if (this.pump(MAX_BYTES_PER_POLL)) {
      this.catchUp();
      this.pump();
    }
    if (this.onLine === null) return;
    const rest = this.partial + this.decoder.end();
    this.partial = "";
    if (rest) this.onLine(rest);
  }

  /**
   * The step (or someone) truncated the file (`: > log`, truncate(1), a logger rotating it in
   * place) below where it was read to: what follows is read from its start, as `tail -f` does,
   * instead of waiting for the file to grow past the old end and resuming mid-line. What it held
   * before this step is gone too, when it was cut below that. True when it was.
   */
  private noticeTruncation(): boolean {
    const size = fstatSync(this.fd).size;
    if (size < this.start) this.start = 0;
    if (size >= this.position) return false;
    this.position = this.start;
    this.partial = "";
    this.decoder.end();
    this.onLine?.(`[gpuplan: ${this.path} was truncated; following it from its start]`);
    return true;
  }

  /**
   * The last `count` lines (a last line without a newline counts), from the file's last 64 KiB; a
   * last line longer than that comes back as its end, after "…".
   */
  tailLines(count: number): string[] {
    const size = fstatSync(this.fd).size;
    // Cut below what it held before this step: all of it is this step's.
    if (size < this.start) this.start = 0;
    const start = Math.max(this.start, size - TAIL_BYTES);
    const buffer = Buffer.allocUnsafe(size - start);
    let got = 0;
    while (got < buffer.length) {
      const n = readSync(this.fd, buffer, got, buffer.length - got, start + got);
      if (n === 0) break;
      got += n;
    }
    let bytes = buffer.subarray(0, got);
    const cut = start > this.start;
    // A window that starts inside a UTF-8 character starts at the next one.
    if (cut) while (((bytes[0] ?? 0) & 0xc0) === 0x80) bytes = bytes.subarray(1);
    const lines = bytes.toString("utf8").split("\n");
    if (lines.at(-1) === "") lines.pop();
    if (cut) {
      // The window starts mid-line. Dropped, unless it is all there is: a step whose last line
      // was one 10 MB JSON dump failed with no stderr line shown at all.
      const first = lines.shift() ?? "";
      if (lines.length === 0 && first !== "") lines.push(`…${first}`);
    }
    return lines.slice(-count);
  }

  /** Closes gpuplan's descriptor; an empty file goes too when `dropIfEmpty` (nothing can write to it any more). */
  close(dropIfEmpty: boolean): void {
    if (this.closed) return;
    const empty = dropIfEmpty && fstatSync(this.fd).size === 0;
    this.closed = true;
    closeSync(this.fd);
    if (empty) unlinkIfThere(this.path);
  }
}

const followed = new Set<OutputFile>();
let timer: NodeJS.Timeout | undefined;

/** Reads the file's new lines every FOLLOW_MS until `unfollow`. */
export function follow(file: OutputFile): void {
  followed.add(file);
  if (timer) return;
  timer = setInterval(() => {
    for (const f of followed) if (f.pump(MAX_BYTES_PER_POLL)) f.catchUp();
  }, FOLLOW_MS);
  // The step's own exit keeps the process alive; this poll must not.
  timer.unref();
}

export function unfollow(file: OutputFile): void {
  followed.delete(file);
  if (followed.size === 0 && timer) {
    clearInterval(timer);
    timer = undefined;
  }
}

/**
 * Removes an empty log, as a courtesy: never at the cost of the run. Someone else may have removed
 * it (a person tidying up), or the folder may have been made read-only (a step's chmod -R a-w on
 * its run folder, a file system remounted read-only): an empty file left is harmless, while the
 * EACCES thrown from here ended the whole run before the step's end was recorded.
 */
function unlinkIfThere(path: string): void {
  try {
    unlinkSync(path);
  } catch {
    // Gone already, or not ours to remove now: it stays, empty.
  }
}
