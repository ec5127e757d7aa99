/**
 * A task Slurm ended without gpuplan's own account of it (no run.end in its events): killed at
 * its time limit, for host memory, with its node, by scancel, or failed before gpuplan started
 * (a chdir, a missing GPU, a gpuplan that would not start). Its pipeline still gets the events a
 * local run would have: the step that was running (or the first, when none started) ends with
 * Slurm's state as the reason, the rest are skipped.
 */
import { constants } from "node:os";
import type { EventDraft, StepStatus } from "../../run/record/events.js";
import { stepKey } from "../../run/record/journal.js";
import type { PlannedPipeline } from "../../schema-types/plan.js";
import type { TaskState } from "./squeue-tasks.js";

/** What the merged events said of one step so far. */
export type StepProgress =
  | { phase: "running"; device: string; attempt: number; startedMs: number }
  | { phase: "settled" };

/** Slurm's end of a task as a step status, and what to do about it. */
export function slurmEnding(t: Pick<TaskState, "state" | "reason" | "exitCode">): {
  status: StepStatus;
  hint: string;
} {
  const why = `Slurm ended task ${t.state}${t.reason ? ` (${t.reason})` : ""}`;
  switch (t.state) {
    case "TIMEOUT":
      return {
        status: "timeout",
        hint: `${why}: it ran past its --time; give the steps timeouts or estimates that fit, or --time-factor / --time`,
      };
    case "OUT_OF_MEMORY":
      return {
        status: "error",
        hint: `${why}: it used more host memory than its --mem; raise --mem (or the node type's share)`,
      };
    case "NODE_FAIL":
    case "BOOT_FAIL":
      return {
        status: "error",
        hint: `${why}: its node failed; --requeue lets Slurm run it again elsewhere`,
      };
    case "CANCELLED":
      return { status: "error", hint: `${why}: cancelled (scancel); gpuplan run --resume RUN runs it again` };
    case "PREEMPTED":
      return { status: "error", hint: `${why}: preempted by a job of higher priority; --requeue` };
    default:
      return {
        status: "error",
        hint: `${why}${t.exitCode !== null ? `, exit ${t.exitCode}` : ""}: see the task's Slurm log`,
      };
  }
}

/** The events that close `pipeline` after its task ended as `task` says, given what ran of it. */
export function closeOutPipeline(
  pipeline: PlannedPipeline,
  progress: ReadonlyMap<string, StepProgress>,
  task: TaskState & { name: string },
  stderrTail: readonly string[],
  logPath: string,
  nowMs: number,
  earlierAttempts?: ReadonlyMap<string, number>,
): EventDraft[] {
  const { status, hint } = slurmEnding(task);
  const signal = task.signal !== null ? signalName(task.signal) : null;
  const drafts: EventDraft[] = [];
  // Steps completed before (a resume) are settled from the start: "nothing ran" means nothing of this task.
  const nothingRan = pipeline.steps.every((s) => progress.get(s.id)?.phase !== "running");
  const firstOpen = pipeline.steps.findIndex((s) => !progress.has(s.id));
  let ended = false;
  for (const [i, step] of pipeline.steps.entries()) {
    const seen = progress.get(step.id);
    if (seen?.phase === "settled") continue;
    if (seen?.phase === "running" || (nothingRan && i === firstOpen)) {
      drafts.push({
        event: "gpu.step.end",
        pipeline: pipeline.name,
        step: step.id,
        device: seen?.phase === "running" ? seen.device : step.device,
        status,
        // The batch script's exit, carried onto the step that never ran — except 0, which says
        // nothing of it (a cancelled or node-failed task) and the views read as a warm worker that
        // exited without answering; the hint says Slurm's state and exit either way.
        exitCode: seen || task.exitCode === 0 ? null : task.exitCode,
        signal: seen ? null : signal,
        durationMs: seen?.phase === "running" ? Math.max(0, Math.round(nowMs - seen.startedMs)) : 0,
        attempt:
          seen?.phase === "running"
            ? seen.attempt
            : (earlierAttempts?.get(stepKey(pipeline.name, step.id)) ?? 0) + 1,
        logPath,
        hint,
        ...(stderrTail.length > 0 && { stderrTail: [...stderrTail] }),
      });
      ended = true;
      continue;
    }
    drafts.push({
      event: "gpu.step.skip",
      pipeline: pipeline.name,
      step: step.id,
      device: step.device,
      reason: ended
        ? `its Slurm task ${task.name} ended ${task.state}`
        : `its Slurm task ${task.name} ended ${task.state} before it ran`,
      cause: "dependency-failed",
    });
  }
  return drafts;
}

function signalName(n: number): string {
  const found = Object.entries(constants.signals).find(([, v]) => v === n);
  return found ? found[0] : `signal ${n}`;
}
