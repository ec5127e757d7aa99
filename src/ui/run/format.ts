/**
 * Words for people, shared by the plain lines, the live view and the summary. Durations and sizes
 * come from src/units (one formatter each); names from the pipeline file are escaped here.
 */
import type { StepStatus } from "../../run/record/events.js";
import { displayCut, escapeText } from "../../text/safe-text.js";
import { formatDuration } from "../../units/duration.js";

export interface StepEnding {
  status: StepStatus;
  exitCode: number | null;
  signal: string | null;
  durationMs: number | null;
  /** Where the attempt ran: an OOM on `cpu` (a CPU step, an on_oom fallback) was host memory. */
  device?: string | null;
}

/** "finished ok in 12.3s", "failed: exit 1", "failed: out of GPU memory (exit 1)", "failed: timed out after 10m". */
export function describeEnding(end: StepEnding): string {
  const after = end.durationMs !== null ? ` after ${formatDuration(end.durationMs)}` : "";
  switch (end.status) {
    case "ok":
      return `finished ok${end.durationMs !== null ? ` in ${formatDuration(end.durationMs)}` : ""}`;
    case "oom":
      return `failed: out of ${end.device === "cpu" ? "host" : "GPU"} memory (${describeExit(end)})${after}`;
    case "timeout":
      return `failed: timed out${after}`;
    case "load-timeout":
      return `failed: the worker did not load in time${after}`;
    case "lock-timeout":
      return `failed: no GPU slot within --lock-timeout${after}`;
    case "interrupted":
      return `interrupted${after}`;
    default:
      // No exit to tell of (a worker that broke the protocol is stopped by gpuplan, a step that
      // could not start never ran): the status, as the summary says it; the hint says why.
      if (end.exitCode === null && end.signal === null) return `failed: ${escapeText(end.status)}${after}`;
      return `failed: ${describeExit(end)}${after}`;
  }
}

/**
 * "exit 1", "killed by SIGKILL", or "exit unknown" when the child left no status. An error or an
 * OOM with exit 0 is a warm worker that ended without answering (a plain step's exit 0 is ok:
 * classify-failure.ts), which "exit 0" alone read as success; an interrupted or timed-out step
 * may well have exited 0 on its signal.
 */
function describeExit(end: { status: string; exitCode: number | null; signal: string | null }): string {
  if (end.signal) return `killed by ${end.signal}`;
  if (end.exitCode === 0 && (end.status === "error" || end.status === "oom"))
    return "exited 0 without answering its task";
  if (end.exitCode !== null) return `exit ${end.exitCode}`;
  return "exit unknown";
}

/**
 * Why a step failed, in a few words: "exit 1", "oom (exit 1)", "timeout (killed by SIGTERM)",
 * or the bare status when the step never ran (a lock timeout has no exit).
 */
export function describeFailure(f: {
  status: string;
  exitCode: number | null;
  signal: string | null;
}): string {
  // Escaped: a Slurm task's events are outside text (the follower checks them; this is the last guard).
  const status = escapeText(f.status);
  if (f.exitCode === null && f.signal === null) return status;
  return f.status === "error" ? describeExit(f) : `${status} (${describeExit(f)})`;
}

/** The `[pipeline/step device]` prefix of plain lines; the step is left out for pipeline-level events. */
export function prefix(pipeline: string | null, step: string | null, device: string | null): string {
  const who = pipeline === null ? "run" : stepName(pipeline, step);
  return device ? `[${who} ${escapeText(device)}]` : `[${who}]`;
}

/**
 * `pipeline/step` (or the pipeline alone), escaped and each cut past MAX_NAME_SHOWN: names come
 * from the pipeline file, and a plain view's every line starts with them (a 20 MB pipeline name
 * made each line of its steps' output 20 MB).
 */
export function stepName(pipeline: string, step: string | null): string {
  return step === null ? displayCut(pipeline) : `${displayCut(pipeline)}/${displayCut(step)}`;
}
