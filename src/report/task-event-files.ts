/**
 * The events a Slurm run's tasks wrote into its folder (`slurm/events/JOB_TASK.jsonl`, each task's
 * pipeline by `slurm/jobs.json`), for the run folder's reader: an exported array's `slurm-JOB` has
 * no follower to merge them into events.jsonl, a detached run's follower never merged them, and
 * one a follower merged may lack what came after it was stopped (or an array a resume submitted
 * before the follower's). Each file is read with the follower's own reading
 * (src/slurm/follow/task-events.ts): only lines that are run events of the task's pipeline.
 */

import { append } from "../lists/append.js";
import type { RunEvent } from "../run/record/events.js";
import type { GpuplanPlan, PlannedPipeline } from "../schema-types/plan.js";
import { parseSlurmRecord } from "../slurm/follow/run-record.js";
import { parseTaskLines } from "../slurm/follow/task-events.js";

/** A file of the run folder by its name there: its text, or why it was not read ("missing": not there). */
export type ReadInFolder = (name: string, limit: number) => Promise<string | { refused: string }>;

export interface TaskEventFiles {
  /** The tasks' events that `merged` does not already hold. */
  events: RunEvent[];
  /** The first line that is not a run event of its task, by file name in the run folder. */
  firstBadLines: Map<string, number>;
  notes: string[];
}

const NOT_READ = "its tasks' events (slurm/events/) were not read";

/**
 * The tasks' events of the Slurm run `run` whose events.jsonl holds `merged`. A task's file ends
 * in a line still being written while the task runs: that line is left for a later reading.
 */
export async function readTaskEventFiles(
  run: string,
  plan: GpuplanPlan | null,
  merged: readonly RunEvent[],
  read: ReadInFolder,
  limit: number,
): Promise<TaskEventFiles> {
  const result: TaskEventFiles = { events: [], firstBadLines: new Map(), notes: [] };
  const jobs = await read("slurm/jobs.json", limit);
  if (typeof jobs !== "string") {
    if (jobs.refused !== "missing") result.notes.push(`slurm/jobs.json: ${jobs.refused}; ${NOT_READ}`);
    return result;
  }
  const record = parseSlurmRecord(jobs);
  if (!record) {
    result.notes.push(
      `slurm/jobs.json: not the list of the run's Slurm job arrays gpuplan wrote; ${NOT_READ}`,
    );
    return result;
  }
  if (!plan) {
    result.notes.push(`slurm/events: without the run's plan its tasks' steps cannot be checked; ${NOT_READ}`);
    return result;
  }
  const planned = new Map(plan.pipelines.map((p) => [p.name, p]));
  const taskEvents: RunEvent[] = [];
  let unplanned = 0;
  for (const array of record.arrays) {
    for (const [i, name] of array.pipelines.entries()) {
      const pipeline = planned.get(name);
      if (!pipeline) {
        unplanned++;
        continue;
      }
      // The job id is digits (parseSlurmRecord): the name is the one the task wrote, nothing else.
      const file = `slurm/events/${array.job}_${i}.jsonl`;
      append(taskEvents, await readTaskFile(file, pipeline, run, read, limit, result));
    }
  }
  if (unplanned > 0)
    result.notes.push(
      `slurm/jobs.json: ${unplanned} task(s) run pipelines the run's plan does not have; their events were not read`,
    );
  result.events = newEvents(taskEvents, merged);
  return result;
}

async function readTaskFile(
  name: string,
  pipeline: PlannedPipeline,
  run: string,
  read: ReadInFolder,
  limit: number,
  result: TaskEventFiles,
): Promise<RunEvent[]> {
  const text = await read(name, limit);
  if (typeof text !== "string") {
    // A task Slurm has not started yet has written nothing: nothing to say.
    if (text.refused !== "missing") result.notes.push(`${name}: ${text.refused}`);
    return [];
  }
  const complete = text.slice(0, text.lastIndexOf("\n") + 1);
  const { events, badLines } = parseTaskLines(complete, pipeline, run);
  const [first] = badLines;
  if (first !== undefined) {
    result.firstBadLines.set(name, first);
    result.notes.push(
      `${name}: ${badLines.length} line(s) are not run events of its task and were left out (the first is line ${first})`,
    );
  }
  // A requeued task records on in the same file and skips the steps its killed run finished: they
  // were counted once. The follower leaves those skips out too.
  const endedOk = new Set<string | null>();
  return events.filter((e) => {
    if (e.event === "gpu.step.end" && e.status === "ok") endedOk.add(e.step);
    return !(e.event === "gpu.step.skip" && e.cause === "completed" && endedOk.has(e.step));
  });
}

/**
 * The tasks' events less those events.jsonl holds (the follower's copy: the same event at the same
 * time, or for a step's end the same attempt, whose status the follower may have rewritten from
 * Slurm's state). An attempt's end said twice (a requeued task that ran it again) counts once: the
 * last.
 */
function newEvents(taskEvents: readonly RunEvent[], merged: readonly RunEvent[]): RunEvent[] {
  const held = new Set(merged.map(sameEvent));
  const ends = new Set(merged.filter((e) => e.event === "gpu.step.end").map(sameAttempt));
  const lastEnd = new Map<string, RunEvent>();
  for (const e of taskEvents) if (e.event === "gpu.step.end") lastEnd.set(sameAttempt(e), e);
  return taskEvents.filter((e) => {
    if (held.has(sameEvent(e))) return false;
    if (e.event !== "gpu.step.end") return true;
    return lastEnd.get(sameAttempt(e)) === e && !ends.has(sameAttempt(e));
  });
}

const attemptOf = (e: RunEvent): number | null =>
  "attempt" in e && typeof e.attempt === "number" ? e.attempt : null;
const sameAttempt = (e: RunEvent): string => `${e.pipeline}\u0000${e.step}\u0000${attemptOf(e)}`;
const sameEvent = (e: RunEvent): string => `${e.event}\u0000${sameAttempt(e)}\u0000${e.ts}`;
