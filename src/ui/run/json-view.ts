/**
 * The JSON view (`--ui json`): every event as one JSON line on stdout — exactly the RunEvent
 * objects, in order — then one final `{"event":"run.summary", …}` line carrying the RunSummary
 * (with ts, run, and null pipeline/step/device like any run-level event); all of them as
 * schemas/run-events.schema.json describes. A run stopped by an error (an untrusted lock
 * directory) ends without the summary: the error is on stderr, the exit code says it. Step output is not
 * streamed: it is in the per-step logs. Nothing else is written, to stdout or stderr.
 * In a run, the session writes the event lines itself (`eventLines`): they are the run's
 * events.jsonl byte for byte, so what a slow reader has not taken is read back from there rather
 * than held in memory (src/run/record/event-files.ts); the view then adds only the summary.
 */
import type { RunEvent } from "../../run/record/events.js";
import type { RunSummaryEvent } from "../../schema-types/run-events.js";
import { jsonText } from "../../text/json-text.js";
import type { RunSummary, RunView, ViewOptions } from "./view.js";
import { writeOut } from "./write-out.js";

export function createJsonView(options: ViewOptions, now: () => Date = () => new Date()): RunView {
  return {
    onEvent(event: RunEvent) {
      if (!options.eventLines) options.out.write(`${jsonText(event)}\n`);
    },
    onOutput() {},
    async close(summary: RunSummary | null) {
      if (summary === null) return;
      const { run, ...rest } = summary;
      const line: RunSummaryEvent = {
        ts: now().toISOString(),
        event: "run.summary",
        run,
        pipeline: null,
        step: null,
        device: null,
        ...rest,
      };
      if (options.eventLines) options.eventLines.append(`${jsonText(line)}\n`);
      else await writeOut(options.out, `${jsonText(line)}\n`);
    },
  };
}
