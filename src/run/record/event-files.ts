/**
 * Where a run's events go as JSON lines: `events.jsonl` in its run directory (a Slurm task's own
 * file under slurm/events/), and the `--events`
 * file when one is given (appended to, so several runs can share one). Written in batches; the
 * journal, not these files, is what `--resume` trusts, so a batch the disk refuses (full, over
 * quota) is dropped and reported to `failures`, and the run goes on; the next batch that goes out
 * starts on a line of its own.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname } from "node:path";
import type { RunEvent } from "./events.js";
import { createLineBatcher } from "./line-batcher.js";
import type { RecordFailures } from "./record-failures.js";

/** How long an event may wait for others to share its write (a reader tailing the file sees it this late). */
const BATCH_DELAY_MS = 20;

export interface EventFiles {
  write(event: RunEvent): void;
  /** Flush what is batched and close the files. */
  close(): void;
}

/** `paths`: the run's own events file first (the run folder's, or a Slurm task's), then `--events`'s. */
export function openEventFiles(paths: readonly string[], failures?: RecordFailures): EventFiles {
  for (const path of paths.slice(1)) mkdirSync(dirname(path), { recursive: true });
  const files = paths.map((path) => ({ path, fd: openSync(path, "a"), torn: false }));
  const lines = createLineBatcher((text) => {
    for (const file of files) {
      const bytes = Buffer.from(file.torn ? `\n${text}` : text);
      try {
        for (let off = 0; off < bytes.length; ) off += writeSync(file.fd, bytes, off);
        file.torn = false;
      } catch (e) {
        // Part of the batch may be in the file: the next one starts a new line.
        file.torn = true;
        failures?.lost(file.path, e);
      }
    }
  }, BATCH_DELAY_MS);
  return {
    write: (event) => lines.push(`${JSON.stringify(event)}\n`),
    close() {
      lines.flush();
      for (const file of files) closeSync(file.fd);
    },
  };
}
