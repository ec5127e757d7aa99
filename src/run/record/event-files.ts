/**
 * Where a run's events go as JSON lines: `events.jsonl` in its run directory (a Slurm task's own
 * file under slurm/events/), and the `--events`
 * file when one is given (appended to, so several runs can share one). Written in batches; the
 * journal, not these files, is what `--resume` trusts, so a batch the disk refuses (full, over
 * quota) is dropped and reported to `failures`, and the run goes on; the next batch that goes out
 * starts on a line of its own. A regular file is written synchronously, so what a batch wrote is
 * in the file when it returns; a FIFO, a socket or a device is written without blocking
 * (stream-target.ts), so a slow reader never holds the run.
 */
import { closeSync, mkdirSync, openSync, statSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { RunEvent } from "./events.js";
import { createLineBatcher } from "./line-batcher.js";
import type { RecordFailures } from "./record-failures.js";
import { createStreamTarget, openStreamPath, type StreamTarget } from "./stream-target.js";

/** How long an event may wait for others to share its write (a reader tailing the file sees it this late). */
const BATCH_DELAY_MS = 20;
/** At the end, how long a FIFO's or a device's reader gets to take what is still waiting. */
const CLOSE_FLUSH_MS = 1000;

export interface EventFiles {
  write(event: RunEvent): void;
  /** Flush what is batched and close the files (a slow reader gets a short, bounded wait). */
  close(): Promise<void>;
}

export interface EventFilesOptions {
  /** What may wait for a FIFO's or a device's slow reader (stream-target.ts's default otherwise). */
  maxBacklogBytes?: number;
}

type Target =
  | { kind: "file"; path: string; fd: number; torn: boolean }
  | { kind: "stream"; path: string; stream: StreamTarget };

/** `paths`: the run's own events file first (the run folder's, or a Slurm task's), then `--events`'s. */
export function openEventFiles(
  paths: readonly string[],
  failures?: RecordFailures,
  options: EventFilesOptions = {},
): EventFiles {
  for (const path of paths.slice(1)) mkdirSync(dirname(path), { recursive: true });
  const targets = paths.map((path) => openTarget(path, failures, options));
  const lines = createLineBatcher((text) => {
    for (const target of targets) {
      if (target.kind === "stream") {
        target.stream.write(text);
        continue;
      }
      const bytes = Buffer.from(target.torn ? `\n${text}` : text);
      try {
        for (let off = 0; off < bytes.length; ) off += writeSync(target.fd, bytes, off);
        target.torn = false;
      } catch (e) {
        // Part of the batch may be in the file: the next one starts a new line.
        target.torn = true;
        failures?.lost(target.path, e);
      }
    }
  }, BATCH_DELAY_MS);
  return {
    write: (event) => lines.push(`${JSON.stringify(event)}\n`),
    async close() {
      lines.flush();
      await Promise.all(
        targets.map((t) => (t.kind === "file" ? closeSync(t.fd) : t.stream.close(CLOSE_FLUSH_MS))),
      );
    },
  };
}

/** A regular file (or a new one) is appended to as it always was; anything else is a stream. */
function openTarget(path: string, failures: RecordFailures | undefined, options: EventFilesOptions): Target {
  const existing = statSync(path, { throwIfNoEntry: false });
  if (!existing || existing.isFile()) return { kind: "file", path, fd: openSync(path, "a"), torn: false };
  const stream = createStreamTarget(path, openStreamPath(path), {
    lost: (e) => failures?.lost(path, e),
    ...(options.maxBacklogBytes !== undefined && { maxBacklogBytes: options.maxBacklogBytes }),
  });
  return { kind: "stream", path, stream };
}
