/**
 * Run telemetry: one JSON object per line in `<run dir>/events.jsonl` (and `--events FILE`, and
 * stdout with `--ui json`). schemas/run-events.schema.json is the contract; the types here are
 * the generated ones, narrowed to what the executor emits (the `run.summary` line is the JSON
 * view's). Parts of the executor hand over drafts; the run stamps `ts` and `run` on each.
 */
import type { GpuplanRunEvent, RunSummaryEvent } from "../../schema-types/run-events.js";

export type { StepStatus } from "../../schema-types/run-events.js";

/** The version readers check, on every `run.start`. */
export const RUN_EVENTS_SCHEMA = "gpuplan/run-events@1";

/** An event of events.jsonl: a discriminated union on `event`. */
export type RunEvent = Exclude<GpuplanRunEvent, RunSummaryEvent>;
export type RunEventName = RunEvent["event"];
export type RunEventOf<N extends RunEventName> = Extract<RunEvent, { event: N }>;

/** An event before the run stamps it: everything but `ts` and `run`. */
export type EventDraft = Unstamped<RunEvent>;
type Unstamped<E> = E extends unknown ? Omit<E, "ts" | "run"> : never;

/** Where events go: the journal, an --events file, the live view. */
export type EventSink = (event: RunEvent) => void;

/** The event with its time and run, the common fields first (ts, event, run, pipeline, step, device). */
export function stampEvent(run: string, draft: EventDraft, now: Date = new Date()): RunEvent {
  const { event, pipeline, step, device, ...fields } = draft;
  // The draft is one member of the union and gets exactly the two fields it lacks.
  return { ts: now.toISOString(), event, run, pipeline, step, device, ...fields } as RunEvent;
}
