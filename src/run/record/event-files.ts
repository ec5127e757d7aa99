/**
 * Where a run's events go as JSON lines: `events.jsonl` in its run directory (a Slurm task's own
 * file under slurm/events/), and the `--events`
 * file when one is given (appended to, so several runs can share one). Written in batches; the
 * journal, not these files, is what `--resume` trusts, so a batch the disk refuses (full, over
 * quota) is dropped and reported to `failures`, and the run goes on; the next batch that goes out
 * starts on a line of its own. A regular file is written synchronously, so what a batch wrote is
 * in the file when it returns; a FIFO, a socket or a device is written without blocking
 * (stream-target.ts), so a slow reader never holds the run, and what it has not taken yet beyond
 * a bound in memory is read back from the run's own file (the first), which holds every line.
 * The same goes for a stream gpuplan already has (a socket as stdout, named `/dev/stdout`) and
 * for `--ui json`'s stdout (`view`): its lines are these very bytes (jsonText, as the view prints
 * JSON), so it too is a copy of the run's own file, and a slow reader of it costs no memory.
 */
import { closeSync, constants, fstatSync, openSync, readSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import { jsonText } from "../../text/json-text.js";
import type { RunEvent } from "./events.js";
import { createLineBatcher } from "./line-batcher.js";
import { makeFoldersSync } from "./make-folders.js";
import { DELETED_WHILE_RUNNING, isDeleted, type RecordFailures } from "./record-failures.js";
import {
  createStreamTarget,
  openStreamPath,
  type Replay,
  type StreamSink,
  type StreamTarget,
} from "./stream-target.js";

/** How long an event may wait for others to share its write (a reader tailing the file sees it this late). */
const BATCH_DELAY_MS = 20;
/**
 * At the end, how long a FIFO that nobody has opened for reading is given to find its reader, and
 * a slow reader is given at the end of an interrupted run.
 */
const GRACE_MS = 1000;

export interface EventFiles {
  write(event: RunEvent): void;
  /**
   * Flush what is batched and close the regular files; then wait until every FIFO's or device's
   * reader has taken what it has yet to take, and close those too (see EventFilesCloseOptions).
   */
  close(options?: EventFilesCloseOptions): Promise<void>;
  /** The first half of close(): flush and close the regular files now (the run folder's own). */
  closeFiles(): void;
  /** A line for the view's output alone (its summary), behind every event written so far. */
  writeToView(text: string): void;
}

interface EventFilesCloseOptions {
  /** Stop waiting for a slow reader: what it has not taken is lost (Ctrl-C during the wait). */
  stop?: AbortSignal;
  /** A reader has kept the end waiting a second: its path and the bytes it has yet to take. */
  onWait?: (path: string, pendingBytes: number) => void;
}

export interface EventFilesOptions {
  /** What may wait in memory for a FIFO's or a device's slow reader (stream-target.ts's default otherwise). */
  maxBacklogBytes?: number;
  /** Paths among those given that name a stream gpuplan already has (its stdout): written through it, not opened. */
  sinks?: ReadonlyMap<string, StreamSink>;
  /**
   * `--ui json`'s stdout: one more copy of the events, said as `viewName` while the end waits for
   * it. Its losses are the view's (the reader leaving is quiet, as for any view), not a record's.
   */
  view?: StreamSink;
  viewName?: string;
}

type Target =
  | { kind: "file"; path: string; fd: number; torn: boolean; end: number }
  | { kind: "stream"; path: string; stream: StreamTarget };

/** `paths`: the run's own events file first (the run folder's, or a Slurm task's), then `--events`'s. */
export function openEventFiles(
  paths: readonly string[],
  failures?: RecordFailures,
  options: EventFilesOptions = {},
): EventFiles {
  for (const path of paths.slice(1)) makeFoldersSync(dirname(path));
  const own = openFileTarget(paths[0]!);
  const replayFd = own && (paths.length > 1 || options.view) ? openSync(own.path, "r") : null;
  const replay: Replay | undefined =
    replayFd === null ? undefined : (into, position) => readSync(replayFd, into, 0, into.length, position);
  const lost = (path: string) => (e: unknown) => failures?.lost(path, e);
  const targets: Target[] = [
    own ?? openStreamTarget(paths[0]!, lost(paths[0]!), options, undefined),
    ...paths.slice(1).map((path) => {
      const sink = options.sinks?.get(path);
      if (sink) return streamTarget(path, sink, lost(path), options, replay);
      return openFileTarget(path) ?? openStreamTarget(path, lost(path), options, replay);
    }),
  ];
  // The view's copy reads back from the run's own file too, which holds every line of it.
  const view =
    options.view && streamTarget(options.viewName ?? "stdout", options.view, () => {}, options, replay);
  if (view) targets.push(view);
  let filesClosed = false;
  const lines = createLineBatcher((text) => {
    // Where this batch starts in the run's own file, for the streams that read it back; null when not there.
    let at: number | null = null;
    for (const target of targets) {
      if (target.kind === "stream") {
        target.stream.write(text, target === targets[0] ? null : at);
        continue;
      }
      const bytes = Buffer.from(target.torn ? `\n${text}` : text);
      try {
        for (let off = 0; off < bytes.length; ) off += writeSync(target.fd, bytes, off);
        if (target === own) at = target.end + (target.torn ? 1 : 0);
        target.torn = false;
        target.end += bytes.length;
      } catch (e) {
        // Part of the batch may be in the file: the next one starts a new line.
        target.torn = true;
        target.end = sizeOf(target.fd, target.end);
        failures?.lost(target.path, e);
      }
    }
  }, BATCH_DELAY_MS);
  const closeFiles = () => {
    if (filesClosed) return;
    filesClosed = true;
    lines.flush();
    for (const t of targets) {
      if (t.kind !== "file") continue;
      // Deleted (with its run folder) while the run ran: every write went into a file no name leads to.
      if (isDeleted(fstatSync(t.fd))) failures?.lost(t.path, new Error(DELETED_WHILE_RUNNING));
      closeSync(t.fd);
    }
  };
  return {
    // jsonText, as the JSON view prints: the view's copy is read back from this file byte for byte.
    write: (event) => lines.push(`${jsonText(event)}\n`),
    closeFiles,
    writeToView(text) {
      if (view?.kind !== "stream") return;
      lines.flush();
      view.stream.write(text, null);
    },
    async close({ stop, onWait } = {}) {
      closeFiles();
      try {
        await Promise.all(
          targets.map((t) =>
            t.kind === "file"
              ? undefined
              : t.stream.close({
                  graceMs: GRACE_MS,
                  ...(stop && { stop }),
                  ...(onWait && { onWait: (bytes: number) => onWait(t.path, bytes) }),
                }),
          ),
        );
      } finally {
        if (replayFd !== null) closeSync(replayFd);
      }
    },
  };
}

/** A regular file (or a new one) is appended to as it always was; null for anything else. */
function openFileTarget(path: string): (Target & { kind: "file" }) | null {
  const existing = statSync(path, { throwIfNoEntry: false });
  if (existing && !existing.isFile()) return null;
  const fd = openSync(path, "a");
  const end = fstatSync(fd).size;
  // A last line cut short by an earlier run (a full disk, a file size limit, kill -9 mid-write):
  // what follows starts a line of its own instead of being glued onto the broken one.
  return { kind: "file", path, fd, torn: end > 0 && !endsWithNewline(path, end), end };
}

/** Whether the file's last byte (at `size - 1`) is a newline; a file that cannot be read back is taken as whole. */
function endsWithNewline(path: string, size: number): boolean {
  const last = Buffer.alloc(1);
  try {
    const fd = openSync(path, constants.O_RDONLY | constants.O_NONBLOCK);
    try {
      return readSync(fd, last, 0, 1, size - 1) !== 1 || last[0] === 0x0a;
    } finally {
      closeSync(fd);
    }
  } catch {
    return true;
  }
}

function openStreamTarget(
  path: string,
  lost: (e: unknown) => void,
  options: EventFilesOptions,
  replay: Replay | undefined,
): Target {
  return streamTarget(path, openStreamPath(path), lost, options, replay);
}

function streamTarget(
  path: string,
  to: number | null | StreamSink,
  lost: (e: unknown) => void,
  options: EventFilesOptions,
  replay: Replay | undefined,
): Target {
  const stream = createStreamTarget(path, to, {
    lost,
    ...(options.maxBacklogBytes !== undefined && { maxBacklogBytes: options.maxBacklogBytes }),
    ...(replay && { replay }),
  });
  return { kind: "stream", path, stream };
}

/** The file's size after a failed write (part of it may have gone in); `fallback` if it cannot be had. */
function sizeOf(fd: number, fallback: number): number {
  try {
    return fstatSync(fd).size;
  } catch {
    return fallback;
  }
}
