/**
 * The plain view (not a TTY, CI, logs): one prefixed line per lifecycle event and per line a step
 * prints, all on stderr — stdout stays free for results. No animation, no cursor movement.
 */

import type { RunEvent, RunEventOf } from "../../run/record/events.js";
import { createLineBatcher } from "../../run/record/line-batcher.js";
import { isFinalState } from "../../slurm/follow/squeue-tasks.js";
import { countNoun } from "../../text/count-noun.js";
import { escapeText } from "../../text/safe-text.js";
import { formatDuration } from "../../units/duration.js";
import { formatSize } from "../../units/size.js";
import { escapeOutputLine } from "../output-line.js";
import type { Paint } from "../paint.js";
import { describeEnding, prefix } from "./format.js";
import { createOutputBacklog } from "./output-backlog.js";
import { formatSummary } from "./summary.js";
import type { RunEnding, RunSummary, RunView, ViewOptions } from "./view.js";
import { writeOut } from "./write-out.js";

/** `paint` is the painter of `options.colorLevel` (createView loads it). */
export function createPlainView(options: ViewOptions, paint: Paint): RunView {
  /** Where each pipeline/step runs now — a retry may move it to the CPU, and output lines say so. */
  const devices = new Map<string, string>();
  for (const pipeline of options.plan.pipelines) {
    for (const step of pipeline.steps) devices.set(`${pipeline.name}/${step.id}`, step.device);
  }
  // Lines go out together, at most 20 ms late: a burst of short steps makes many lines, and a
  // write each was a measurable share of their cost (bench:run).
  const lines = createLineBatcher((text) => options.err.write(text), 20);
  const write = (line: string): void => lines.push(`${line}\n`);
  // Step output a slow reader of stderr has not taken is bounded (output-backlog.ts).
  const backlog = createOutputBacklog(() => options.err.writableLength ?? 0);
  let logs: string | null = null;
  const noteUnshown = (atEnd = false) => {
    const n = backlog.takeUnshown(atEnd);
    if (n > 0) write(paint.yellow(unshownNote(n, logs)));
  };
  return {
    onEvent(event) {
      if (event.event === "run.start") logs = `${event.runDir}/logs`;
      if (event.pipeline && event.step && event.device)
        devices.set(`${event.pipeline}/${event.step}`, event.device);
      const line = describeEvent(event, paint);
      if (line === null) return;
      noteUnshown();
      write(line);
    },
    onOutput(pipeline, step, _stream, line) {
      if (!backlog.admit()) return;
      noteUnshown();
      const device = devices.get(`${pipeline}/${step}`) ?? null;
      write(`${paint.dim(prefix(pipeline, step, device))} ${escapeOutputLine(line, paint.level > 0)}`);
    },
    async close(summary: RunSummary | null, ending?: RunEnding) {
      noteUnshown(true);
      lines.flush();
      if (summary !== null) await writeOut(options.err, formatSummary(summary, paint, ending));
    },
  };
}

/** Said where step output lines were left out for a slow reader, and where they all are. */
function unshownNote(count: number, logs: string | null): string {
  const lines = `${count.toLocaleString("en-US")} ${count === 1 ? "line" : "lines"}`;
  return `[gpuplan: ${lines} of step output not shown (stderr was read slower than the steps printed); ${logs === null ? "the step logs have" : `the logs under ${escapeText(logs)} have`} all of them]`;
}

/** "pending in Slurm (Resources)", "running on node7, GPU 2", "done in Slurm", "failed in Slurm: TIMEOUT". */
function describeSlurmTask(event: RunEventOf<"slurm.task">, paint: Paint): string {
  const e = escapeText;
  const job = paint.dim(`(job ${e(event.job)})`);
  const reason = event.reason ? ` (${e(event.reason)})` : "";
  switch (event.state) {
    case "PENDING":
      return `${paint.yellow(`pending in Slurm${reason}`)} ${job}`;
    case "RUNNING":
      return `running on ${e(event.node ?? "?")}${event.gpus ? `, GPU ${e(event.gpus)}` : ""} ${job}`;
    case "COMPLETED":
      return `${paint.green("done in Slurm")} ${job}`;
    default: {
      if (!isFinalState(event.state)) return `${e(event.state)}${reason} ${job}`;
      const exit = event.exitCode !== null && event.exitCode !== 0 ? `, exit ${event.exitCode}` : "";
      return `${paint.red(`failed in Slurm: ${e(event.state)}${reason}${exit}`)} ${job}`;
    }
  }
}

/**
 * One line for a lifecycle event, or null for events a reader of the log need not see. Strings an
 * event carries may come from the pipeline or plan file (names, keys, reasons naming steps): `e`
 * escapes them.
 */
function describeEvent(event: RunEvent, paint: Paint): string | null {
  const head = paint.dim(prefix(event.pipeline, event.step, event.device));
  const e = escapeText;
  switch (event.event) {
    case "run.start":
      return `${head} started run ${e(event.run)} (${countNoun(event.pipelines.length, "pipeline")}) in ${e(event.runDir)}`;
    case "gpu.lock.wait": {
      const what =
        event.slots > 1
          ? `all ${event.slots} slots of ${e(event.gpu)} (exclusive)`
          : `a slot on ${e(event.gpu)}`;
      return `${head} ${paint.yellow(`waiting for ${what}`)}`;
    }
    case "gpu.lock.acquired": {
      const n = event.slots;
      const waited = event.waitedMs > 0 ? ` after ${formatDuration(event.waitedMs)}` : "";
      // An exclusive step's slots include the one its pipeline already got (a line of its own):
      // naming them again read as a second slot taken. What is new is that the step has it all —
      // on a one-slot GPU nothing more was taken.
      if (event.exclusive && event.step !== null) {
        const what = n.length > 1 ? `got all ${n.length} slots of` : "has all of";
        return `${head} ${what} ${e(event.gpu)} (exclusive)${waited}`;
      }
      const which = n.length > 0 ? `slot${n.length > 1 ? "s" : ""} ${n.join(",")}` : "a slot";
      return `${head} got ${which} of ${e(event.gpu)}${waited}`;
    }
    case "gpu.step.start":
      return `${head} started${event.attempt > 1 ? ` (attempt ${event.attempt})` : ""}${event.cpus ? ` on CPUs ${e(event.cpus)}` : ""}`;
    case "gpu.step.end": {
      const text = describeEnding(event);
      return `${head} ${event.status === "ok" ? paint.green(text) : paint.red(text)}`;
    }
    case "gpu.step.retry":
      // `device`: where the next attempt runs (cpu for an on_oom fallback).
      return `${head} ${paint.yellow(`retrying (attempt ${event.attempt} of ${event.of}) on ${e(event.device ?? "?")} after ${e(event.reason)}${describeRung(event)}`)}`;
    case "gpu.step.skip":
      return `${head} skipped: ${e(event.reason)}`;
    case "gpu.step.over_reservation":
      return `${head} ${paint.yellow(`used ${formatSize(event.peakVramBytes)} of VRAM, over its reservation of ${formatSize(event.reservationBytes)}`)}`;
    case "gpu.model.load_start":
      return `${head} loading worker ${e(event.model_key)}`;
    case "gpu.model.load_complete":
      return `${head} worker ${e(event.model_key)} ready in ${formatDuration(event.duration_ms)}`;
    case "slurm.submit":
      return `${head} submitted ${event.pipelines.length} pipeline${event.pipelines.length === 1 ? "" : "s"} as Slurm job array ${e(event.job)} (${e(event.script)})`;
    case "slurm.task":
      return `${head} ${describeSlurmTask(event, paint)}`;
    case "slurm.unanswered":
      return `${head} ${paint.yellow(e(event.message))}`;
    case "gpu.model.cache_evict":
      return `${head} ${paint.dim(`worker ${e(event.model_key)} stopped (${e(event.reason)})`)}`;
    default:
      // lock.released, memory snapshots, per-task model events (gpu.model.cache_reuse and the like), step.oom/timeout (step.end says it) and run.end (the summary says it).
      return null;
  }
}

/** What the on_oom ladder's rung did, after "after oom": ": smaller (scale 0.5)", ": wait (3.2s, 40 GiB free)". */
function describeRung(event: RunEventOf<"gpu.step.retry">): string {
  if (!event.rung || event.rung === "retry" || event.rung === "cpu") return "";
  const parts: string[] = [];
  if (event.rung === "smaller" && event.scale !== undefined) parts.push(`scale ${event.scale}`);
  if (event.waitedMs !== undefined) parts.push(`waited ${formatDuration(event.waitedMs)}`);
  if (event.freeBytes !== undefined && event.freeBytes !== null)
    parts.push(`${formatSize(event.freeBytes)} free`);
  if (event.note) parts.push(escapeText(event.note));
  return `: ${event.rung}${parts.length > 0 ? ` (${parts.join(", ")})` : ""}`;
}
