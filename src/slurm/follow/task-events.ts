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
  /** Bytes of each task's file read so far (always just after a newline). */
  const cursors = new Map<string, number>();
  return {
    read(task, pipeline) {
      const { text, offset } = readLines(runDir, join("events", `${task}.jsonl`), cursors.get(task) ?? 0);
      cursors.set(task, offset);
      const { events, ended } = parseTaskLines(text, pipeline, run);
      return { events, ended };
    },
  };
}

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
  if (e.event === ("run.summary" as string) || e.event.startsWith("slurm.")) return false;
  if (e.pipeline !== null && e.pipeline !== pipeline.name) return false;
  if (e.step !== null && (e.pipeline === null || !pipeline.steps.some((s) => s.id === e.step))) return false;
  return true;
}

/**
 * The complete lines from `offset` on, and the offset after the last of them. A FIFO, a link or
 * anything but a regular file in the task's place reads as nothing yet (readTaskFile).
 */
function readLines(runDir: string, name: string, offset: number): { text: string; offset: number } {
  const read = readTaskFile(runDir, name, { from: offset, maxBytes: Number.MAX_SAFE_INTEGER });
  if (!("bytes" in read) || read.bytes.length === 0) return { text: "", offset };
  const end = read.bytes.lastIndexOf(0x0a) + 1;
  return { text: read.bytes.subarray(0, end).toString("utf8"), offset: offset + end };
}
