/**
 * Where a run's events go as JSON lines: `events.jsonl` in its run directory, and the `--events`
 * file when one is given (appended to, so several runs can share one). Written in batches; the
 * journal, not these files, is what `--resume` trusts.
 */
import { closeSync, mkdirSync, openSync, writeSync } from "node:fs";
import { dirname, join } from "node:path";
import type { RunEvent } from "./events.js";
import { createLineBatcher } from "./line-batcher.js";

/** How long an event may wait for others to share its write (a reader tailing the file sees it this late). */
const BATCH_DELAY_MS = 20;

export interface EventFiles {
  write(event: RunEvent): void;
  /** Flush what is batched and close the files. */
  close(): void;
}

export function openEventFiles(runDir: string, extraFile?: string): EventFiles {
  const fds = [openSync(join(runDir, "events.jsonl"), "a")];
  if (extraFile) {
    mkdirSync(dirname(extraFile), { recursive: true });
    fds.push(openSync(extraFile, "a"));
  }
  const lines = createLineBatcher((text) => {
    for (const fd of fds) writeSync(fd, text);
  }, BATCH_DELAY_MS);
  return {
    write: (event) => lines.push(`${JSON.stringify(event)}\n`),
    close() {
      lines.flush();
      for (const fd of fds) closeSync(fd);
    },
  };
}
