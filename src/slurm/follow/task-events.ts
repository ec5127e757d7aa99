/**
 * Reads the tasks' event files as they grow: each poll takes the complete lines written since the
 * last one (a line still being written waits for its newline), parses them, and hands them over
 * with the run id of the submitting gpuplan in place of the task's own. A task's run.start and
 * run.end are its own business: the follower's run has one of each.
 *
 * A task's file is outside text (anything on the node may write it): only lines that are run
 * events by the schema, of the task's own pipeline and its steps, are taken; the rest (`null`, a
 * made-up step, a status no run writes, the follower's own slurm.* events) are left out, as lines
 * that are not JSON are.
 */
import { join } from "node:path";
import validateRunEvent from "../../generated/run-events-validator.js";
import { append } from "../../lists/append.js";
import { hasRealTime } from "../../run/record/event-time.js";
import type { RunEvent } from "../../run/record/events.js";
import type { PlannedPipeline } from "../../schema-types/plan.js";
import { readTaskFile } from "./read-task-file.js";

export interface TaskEventReader {
  /**
   * New events of the task's file (`slurm/events/JOB_TASK.jsonl`, running `pipeline`), in file
   * order; `ended` says whether its run.end was among them.
   */
  read(task: string, pipeline: PlannedPipeline): { events: RunEvent[]; ended: boolean };
}

/** A reader of the task files of the run `run` (its id) in the run folder `runDir`. */
export function createTaskEventReader(run: string, runDir: string): TaskEventReader {
  /** Where each task's file is read on from (just after a newline, or inside a line being skipped). */
  const cursors = new Map<string, Cursor>();
  return {
    read(task, pipeline) {
      const name = join("events", `${task}.jsonl`);
      const cursor = cursors.get(task) ?? { offset: 0, skipping: false };
      cursors.set(task, cursor);
      const events: RunEvent[] = [];
      let ended = false;
      // Chunk by chunk to the file's end: what a task wrote between two polls may be far more
      // than one string can hold (a file read whole as one was ERR_STRING_TOO_LONG, the follower's crash).
      for (;;) {
        const chunk = readChunk(runDir, name, cursor);
        const lines = parseTaskLines(chunk.text, pipeline, run);
        append(events, lines.events);
        ended ||= lines.ended;
        if (!chunk.more) return { events, ended };
      }
    },
  };
}

interface Cursor {
  offset: number;
  /** Inside a line too long to be an event (CHUNK_BYTES): what is left of it is not read. */
  skipping: boolean;
}

/** How much of a task's file one read takes; a line longer than this is no event a task writes. */
const CHUNK_BYTES = 4 * 1024 * 1024;

/** What complete lines of a task's events file say (text: whole lines, each ending in a newline). */
export interface TaskLines {
  /** The task's run events, its run.start and run.end left out, with `run` in place of its own run id. */
  events: RunEvent[];
  /** Whether its run.end was among them. */
  ended: boolean;
  /** The 1-based numbers (within `text`) of the lines that are not the task's run events. */
  badLines: number[];
}

/**
 * The task's events among `text`'s lines — the one reading of a task's file, for the follower as
 * it grows and for a run folder read afterwards (src/report/task-event-files.ts).
 */
export function parseTaskLines(text: string, pipeline: PlannedPipeline, run: string): TaskLines {
  const events: RunEvent[] = [];
  const badLines: number[] = [];
  let ended = false;
  text.split("\n").forEach((line, i) => {
    if (!line.trim()) return;
    let data: unknown;
    try {
      data = JSON.parse(line);
    } catch {
      data = undefined;
    }
    if (!isTaskEvent(data, pipeline)) {
      badLines.push(i + 1);
      return;
    }
    if (data.event === "run.end") ended = true;
    if (data.event === "run.start" || data.event === "run.end") return;
    events.push({ ...data, run });
  });
  return { events, ended, badLines };
}

/** A run event by the schema, about the task's own pipeline (or none) and one of its steps (or none). */
function isTaskEvent(data: unknown, pipeline: PlannedPipeline): data is RunEvent {
  if (!validateRunEvent(data)) return false;
  const e = data as RunEvent;
  if (!hasRealTime(e)) return false;
  if (e.event === ("run.summary" as string) || e.event.startsWith("slurm.")) return false;
  if (e.pipeline !== null && e.pipeline !== pipeline.name) return false;
  if (e.step !== null && (e.pipeline === null || !pipeline.steps.some((s) => s.id === e.step))) return false;
  return true;
}

/**
 * The complete lines of the next chunk from the cursor on (advancing it past them), and whether
 * the file has more after them. A FIFO, a link or anything but a regular file in the task's place
 * reads as nothing yet (readTaskFile). A chunk without a newline is a line no task writes (a step's
 * output gone astray, junk): it is passed over to its end, never held whole.
 */
function readChunk(runDir: string, name: string, cursor: Cursor): { text: string; more: boolean } {
  const read = readTaskFile(runDir, name, { from: cursor.offset, maxBytes: CHUNK_BYTES });
  if (!("bytes" in read) || read.bytes.length === 0) return { text: "", more: false };
  const full = read.bytes.length === CHUNK_BYTES;
  let start = 0;
  if (cursor.skipping) {
    start = read.bytes.indexOf(0x0a) + 1;
    if (start === 0) {
      cursor.offset += read.bytes.length;
      return { text: "", more: full };
    }
    cursor.skipping = false;
  }
  const end = read.bytes.lastIndexOf(0x0a) + 1;
  if (end <= start) {
    // A line still being written waits for its newline, unless it is already longer than any event.
    if (full && start === 0) {
      cursor.offset += read.bytes.length;
      cursor.skipping = true;
    } else cursor.offset += start;
    return { text: "", more: full };
  }
  cursor.offset += end;
  return { text: read.bytes.subarray(start, end).toString("utf8"), more: full };
}
