/**
 * The plain view (not a TTY, CI, logs): one prefixed line per lifecycle event and per line a step
 * prints, all on stderr — stdout stays free for results. No animation, no cursor movement.
 */

import type { RunEvent } from "../../run/record/events.js";
import { createLineBatcher } from "../../run/record/line-batcher.js";
import { createPaint, type Paint } from "../paint.js";
import { readNumber, readSlotCount, readSlotNumbers, readStatus, readString } from "./event-fields.js";
import { describeEnding, formatDuration, prefix } from "./format.js";
import { formatSummary } from "./summary.js";
import type { RunSummary, RunView, ViewOptions } from "./view.js";
import { writeOut } from "./write-out.js";

export function createPlainView(options: ViewOptions): RunView {
  const paint = createPaint(options.color);
  /** Where each pipeline/step runs now — a retry may move it to the CPU, and output lines say so. */
  const devices = new Map<string, string>();
  for (const pipeline of options.plan.pipelines) {
    for (const step of pipeline.steps) devices.set(`${pipeline.name}/${step.id}`, step.device);
  }
  // Lines go out together, at most 20 ms late: a burst of short steps makes many lines, and a
  // write each was a measurable share of their cost (bench:run).
  const lines = createLineBatcher((text) => options.err.write(text), 20);
  const write = (line: string): void => lines.push(`${line}\n`);
  return {
    onEvent(event) {
      if (event.pipeline && event.step && event.device)
        devices.set(`${event.pipeline}/${event.step}`, event.device);
      const line = describeEvent(event, paint);
      if (line !== null) write(line);
    },
    onOutput(pipeline, step, _stream, line) {
      const device = devices.get(`${pipeline}/${step}`) ?? null;
      write(`${paint.dim(prefix(pipeline, step, device))} ${line}`);
    },
    async close(summary: RunSummary) {
      lines.flush();
      await writeOut(options.err, formatSummary(summary, paint));
    },
  };
}

/** One line for a lifecycle event, or null for events a reader of the log need not see. */
function describeEvent(event: RunEvent, paint: Paint): string | null {
  const head = paint.dim(prefix(event.pipeline, event.step, event.device));
  switch (event.event) {
    case "run.start": {
      const pipelines = Array.isArray(event.pipelines) ? event.pipelines.length : null;
      const dir = readString(event, "runDir");
      return `${head} started run ${event.run}${pipelines !== null ? ` (${pipelines} pipelines)` : ""}${dir ? ` in ${dir}` : ""}`;
    }
    case "gpu.lock.wait": {
      const gpu = readString(event, "gpu") ?? event.device ?? "?";
      const slots = readSlotCount(event) ?? 1;
      const what = slots > 1 ? `all ${slots} slots of ${gpu} (exclusive)` : `a slot on ${gpu}`;
      return `${head} ${paint.yellow(`waiting for ${what}`)}`;
    }
    case "gpu.lock.acquired": {
      const gpu = readString(event, "gpu") ?? event.device ?? "?";
      const numbers = readSlotNumbers(event);
      const waited = readNumber(event, "waitedMs");
      const which =
        numbers && numbers.length > 0
          ? `slot${numbers.length > 1 ? "s" : ""} ${numbers.join(",")}`
          : "a slot";
      return `${head} got ${which} of ${gpu}${waited !== null && waited > 0 ? ` after ${formatDuration(waited)}` : ""}`;
    }
    case "gpu.step.start": {
      const attempt = readNumber(event, "attempt");
      const cpus = readString(event, "cpus");
      return `${head} started${attempt !== null && attempt > 1 ? ` (attempt ${attempt})` : ""}${cpus ? ` on CPUs ${cpus}` : ""}`;
    }
    case "gpu.step.end": {
      const status = readStatus(event);
      const text = describeEnding({
        status,
        exitCode: readNumber(event, "exitCode"),
        signal: readString(event, "signal"),
        durationMs: readNumber(event, "durationMs"),
      });
      return `${head} ${status === "ok" ? paint.green(text) : paint.red(text)}`;
    }
    case "gpu.step.retry": {
      const attempt = readNumber(event, "attempt");
      const of = readNumber(event, "of");
      const reason = readString(event, "reason");
      const next = readString(event, "nextDevice");
      const count = attempt !== null ? ` (attempt ${attempt}${of !== null ? ` of ${of}` : ""})` : "";
      return `${head} ${paint.yellow(`retrying${count}${next ? ` on ${next}` : ""}${reason ? ` after ${reason}` : ""}`)}`;
    }
    case "gpu.step.skip": {
      const reason = readString(event, "reason");
      return `${head} skipped${reason ? `: ${reason}` : ""}`;
    }
    case "gpu.model.load_start":
      return `${head} loading worker ${readString(event, "model_key") ?? "?"}`;
    case "gpu.model.load_complete": {
      const ms = readNumber(event, "duration_ms");
      return `${head} worker ${readString(event, "model_key") ?? "?"} ready${ms !== null ? ` in ${formatDuration(ms)}` : ""}`;
    }
    case "gpu.model.cache_evict":
      return `${head} ${paint.dim(`worker ${readString(event, "model_key") ?? "?"} stopped (${readString(event, "reason") ?? "?"})`)}`;
    default:
      // lock.released, memory snapshots, per-task model events (gpu.model.cache_reuse and the like), step.oom/timeout (step.end says it) and run.end (the summary says it).
      return null;
  }
}
