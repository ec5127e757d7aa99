/** Words and numbers for people, shared by the plain lines, the live view and the summary. */
import type { StepStatus } from "../../run/record/events.js";

/** 850ms, 12.3s, 4m05s, 1h02m — short and stable, so snapshots and logs line up. */
export function formatDuration(ms: number): string {
  const safe = Math.max(0, ms);
  if (safe < 1000) return `${Math.round(safe)}ms`;
  if (safe < 60_000) return `${(Math.floor(safe / 100) / 10).toFixed(1)}s`;
  const totalSeconds = Math.floor(safe / 1000);
  const seconds = totalSeconds % 60;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (totalMinutes < 60) return `${totalMinutes}m${String(seconds).padStart(2, "0")}s`;
  const minutes = totalMinutes % 60;
  return `${Math.floor(totalMinutes / 60)}h${String(minutes).padStart(2, "0")}m`;
}

/** Elapsed time on a ticking clock: whole seconds, since tenths would redraw every frame. */
export function formatElapsed(ms: number): string {
  const totalSeconds = Math.floor(Math.max(0, ms) / 1000);
  const seconds = totalSeconds % 60;
  const totalMinutes = Math.floor(totalSeconds / 60);
  if (totalMinutes < 60) return `${totalMinutes}:${String(seconds).padStart(2, "0")}`;
  const minutes = totalMinutes % 60;
  return `${Math.floor(totalMinutes / 60)}:${String(minutes).padStart(2, "0")}:${String(seconds).padStart(2, "0")}`;
}

/** GiB with one decimal (GPU memory is what is shown; MiB below 1 GiB). */
export function formatBytes(bytes: number): string {
  const gib = bytes / 1024 ** 3;
  if (gib >= 1) return `${gib.toFixed(1)} GiB`;
  return `${Math.round(bytes / 1024 ** 2)} MiB`;
}

export interface StepEnding {
  status: StepStatus;
  exitCode: number | null;
  signal: string | null;
  durationMs: number | null;
}

/** "finished ok in 12.3s", "failed: exit 1", "failed: out of GPU memory (exit 1)", "failed: timed out after 10m00s". */
export function describeEnding(end: StepEnding): string {
  const after = end.durationMs !== null ? ` after ${formatDuration(end.durationMs)}` : "";
  switch (end.status) {
    case "ok":
      return `finished ok${end.durationMs !== null ? ` in ${formatDuration(end.durationMs)}` : ""}`;
    case "oom":
      return `failed: out of GPU memory (${describeExit(end)})${after}`;
    case "timeout":
      return `failed: timed out${after}`;
    case "load-timeout":
      return `failed: the worker did not load in time${after}`;
    case "lock-timeout":
      return `failed: no GPU slot within --lock-timeout${after}`;
    case "interrupted":
      return `interrupted${after}`;
    default:
      return `failed: ${describeExit(end)}${after}`;
  }
}

/** "exit 1", "killed by SIGKILL", or "exit unknown" when the child left no status. */
function describeExit(end: { exitCode: number | null; signal: string | null }): string {
  if (end.signal) return `killed by ${end.signal}`;
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
  if (f.exitCode === null && f.signal === null) return f.status;
  return f.status === "error" ? describeExit(f) : `${f.status} (${describeExit(f)})`;
}

/** The `[pipeline/step device]` prefix of plain lines; the step is left out for pipeline-level events. */
export function prefix(pipeline: string | null, step: string | null, device: string | null): string {
  const who = pipeline === null ? "run" : step === null ? pipeline : `${pipeline}/${step}`;
  return device ? `[${who} ${device}]` : `[${who}]`;
}
