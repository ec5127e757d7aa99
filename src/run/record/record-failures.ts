/**
 * What a run could not write to its records (journal, events) — a full disk, a quota, a removed
 * folder. Steps never pay for it: the run goes on, each file's first failure is reported once as it
 * happens, and the run ends saying its records are incomplete (`records-incomplete`) instead of
 * dying with an uncaught ENOSPC and abandoning its steps.
 */
import { basename } from "node:path";
import { errnoOf } from "../../problems/file-errors.js";

/**
 * The reason given for a record file deleted (or its folder removed) while the run ran: writes to
 * it still succeed, into a file no name leads to, so no write fails to say so; the writers ask
 * the file itself (its link count) instead.
 */
export const DELETED_WHILE_RUNNING = "deleted while the run ran";

/** Whether a record file's descriptor still leads to a file with a name (fstat's link count). */
export function isDeleted(stat: { nlink: number }): boolean {
  return stat.nlink === 0;
}

/** Whether the run's journal was deleted while it ran: nothing is left for `--resume` to go on. */
export function isJournalDeleted(lost: readonly RecordFailure[]): boolean {
  return lost.some((f) => f.reason === DELETED_WHILE_RUNNING && basename(f.file) === "journal.jsonl");
}

export interface RecordFailure {
  /** The file, as it appears in messages. */
  file: string;
  /** The system's reason (`ENOSPC`…). */
  reason: string;
}

export interface RecordFailures {
  /** `file` could not be written now; said once per file (onFirst). */
  failed(file: string, e: unknown): void;
  /** `file` has lost something for good (said once at the end). */
  lost(file: string, e: unknown): void;
  /** The files whose records are incomplete, in the order they first lost something. */
  incomplete(): RecordFailure[];
}

/** `onFirst` hears each file's first write failure while the run goes on. */
export function recordFailures(onFirst: (failure: RecordFailure) => void = () => undefined): RecordFailures {
  const said = new Set<string>();
  const lost = new Map<string, RecordFailure>();
  const reasonOf = (e: unknown) => errnoOf(e) ?? (e instanceof Error ? e.message : String(e));
  const failed = (file: string, e: unknown) => {
    if (said.has(file)) return;
    said.add(file);
    onFirst({ file, reason: reasonOf(e) });
  };
  return {
    failed,
    lost(file, e) {
      failed(file, e);
      if (!lost.has(file)) lost.set(file, { file, reason: reasonOf(e) });
    },
    incomplete: () => [...lost.values()],
  };
}
