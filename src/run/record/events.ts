/**
 * Run telemetry: one JSON object per line in `<run dir>/events.jsonl` (and `--events FILE`,
 * and stdout with `--ui json`). Every event has ts, event, run, pipeline, step, device; the rest
 * depends on the event.
 */
export type RunEventName =
  | "run.start"
  | "run.end"
  | "gpu.lock.wait"
  | "gpu.lock.acquired"
  | "gpu.lock.released"
  | "gpu.step.start"
  | "gpu.step.end"
  | "gpu.step.skip"
  | "gpu.step.oom"
  | "gpu.step.timeout"
  | "gpu.step.retry"
  | "gpu.memory.snapshot"
  | "gpu.model.load_start"
  | "gpu.model.load_complete"
  | "gpu.model.inference_start"
  | "gpu.model.inference_end"
  | "gpu.model.cache_store"
  | "gpu.model.cache_reuse"
  | "gpu.model.cache_evict"
  | "gpu.model.cleanup";

/** `load-timeout`: a worker step's worker did not answer `{"ready": true}` within ready_timeout. */
export type StepStatus = "ok" | "error" | "oom" | "timeout" | "load-timeout" | "interrupted";

export interface RunEvent {
  /** ISO 8601 with milliseconds, UTC. */
  ts: string;
  event: RunEventName;
  run: string;
  pipeline: string | null;
  step: string | null;
  /** cuda:N, rocm:N, cpu, or null for run-level events. */
  device: string | null;
  /** gpu.step.end: status, exitCode, signal, durationMs, attempt, logPath, stderrPath; gpu.lock.*: gpu, slots, waitedMs, holders; … */
  [field: string]: unknown;
}

/** Where events go: the journal, an --events file, the live view. */
export type EventSink = (event: RunEvent) => void;
