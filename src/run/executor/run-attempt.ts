/**
 * One attempt of one step: its environment and log file, a process of its own or a task for a
 * warm worker, then how it ended — classified, journaled (before it is reported, so a resume
 * never redoes a step reported ok), emitted, and counted when no retry follows.
 */
import { join, resolve } from "node:path";
import { formatCpuList } from "../../detect/cpu-list.js";
import type { PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../../schema-types/plan.js";
import type { SlotLease } from "../lock/types.js";
import { safeName } from "../prepare/run-id.js";
import type { StepStatus } from "../record/events.js";
import { classifyEnding } from "../step/classify-failure.js";
import { loadAffinityControl, stepCpus } from "../step/spawn/cpu-affinity.js";
import { buildStepEnvironment, visibleGpus } from "../step/step-env.js";
import { runStepProcess, type StepProcessOptions } from "../step/step-process.js";
import { runWorkerTask } from "../warm/worker-step.js";
import { willRetry } from "./attempts.js";
import { snapshotMemory } from "./memory-snapshots.js";
import type { RunContext } from "./run-context.js";

const FAILURE_TAIL_LINES = 10;

export interface Attempt {
  pipeline: PlannedPipeline;
  step: PlannedStep;
  /** The number in log names and events (a load-timeout retry makes it run ahead of `planned`). */
  attempt: number;
  /** Which of the step's planned attempts this is (on_oom counts these). */
  planned: number;
  onCpu: boolean;
  leases: readonly SlotLease[];
  /** A load timeout now gets one more try: it is not a failure yet. */
  loadRetry: boolean;
  /** Called as soon as the process has ended with a status no retry will follow (before the journal flush). */
  onSettled?: (status: StepStatus) => void;
}

export async function runAttempt(ctx: RunContext, a: Attempt): Promise<StepStatus> {
  const { options, run, plan } = ctx;
  const { pipeline, step, attempt, onCpu, leases } = a;
  const device = onCpu ? "cpu" : step.device;
  const { logPath, stderrPath } = stepLogPaths(options.runDir, pipeline.name, step, attempt);
  const env = buildStepEnvironment({ run, pipeline, step, registry: plan.registry, onCpu }, ctx.baseEnv);
  const gpus = visibleGpus({ run, pipeline, step, registry: plan.registry, onCpu });
  const cpus = await pinnedCpus(gpus);
  ctx.emit({
    event: "gpu.step.start",
    pipeline: pipeline.name,
    step: step.id,
    device,
    attempt,
    logPath,
    ...(stderrPath && { stderrPath }),
    ...(cpus && { cpus: formatCpuList(cpus) }),
  });
  snapshotMemory(ctx, pipeline, step, device, onCpu, "step.start");
  const cwd = resolve(options.baseDir, step.cwd ?? ".");
  const onLine = (stream: "stdout" | "stderr", line: string) =>
    options.onOutput?.(pipeline.name, step.id, stream, line);
  const { result, verdict } = step.worker
    ? await runWorkerTask(ctx.pool, {
        worker: step.worker,
        pipeline,
        step,
        attempt,
        device,
        gpus,
        leases: onCpu ? [] : leases,
        cpus,
        env,
        cwd,
        logPath,
        signal: ctx.stopSignal,
        onLine,
      })
    : await runPlainStep(step, device, {
        argv: step.argv,
        shell: step.shell,
        cwd,
        env,
        logPath,
        stderrPath: stderrPath!,
        inheritFds: leases.flatMap((l) => [...l.fds]),
        cpus,
        timeoutMs: step.timeoutMs,
        killGraceMs: ctx.killGraceMs,
        signal: ctx.stopSignal,
        ...(options.interruptSignal && { interruptSignal: options.interruptSignal }),
        ...(options.killNow && { killNow: options.killNow }),
        onLine,
      });
  snapshotMemory(ctx, pipeline, step, device, onCpu, verdict.status === "oom" ? "oom" : "step.end");
  // The same test runAttempts makes after this returns (the stop can only come on, never go).
  const retries =
    !ctx.stopSignal.aborted &&
    ((verdict.status === "load-timeout" && a.loadRetry) || willRetry(step, a.planned, verdict.status));
  if (!retries) a.onSettled?.(verdict.status);
  if (verdict.status === "timeout") {
    ctx.emit({
      event: "gpu.step.timeout",
      pipeline: pipeline.name,
      step: step.id,
      device,
      timeoutMs: step.timeoutMs,
      attempt,
    });
  }
  if (verdict.status === "oom") {
    ctx.emit({
      event: "gpu.step.oom",
      pipeline: pipeline.name,
      step: step.id,
      device,
      framework: verdict.framework,
      attempt,
    });
  }
  // Flushed before the step is reported done: a resume never redoes a step reported ok.
  await ctx.journalStep(
    pipeline.name,
    step,
    verdict.status,
    attempt,
    device,
    result.exitCode,
    result.durationMs,
  );
  const failed = verdict.status !== "ok" && verdict.status !== "interrupted";
  ctx.emit({
    event: "gpu.step.end",
    pipeline: pipeline.name,
    step: step.id,
    device,
    status: verdict.status,
    exitCode: result.exitCode,
    signal: result.signal,
    durationMs: result.durationMs,
    attempt,
    logPath,
    ...(stderrPath && { stderrPath }),
    ...(verdict.framework && { framework: verdict.framework }),
    ...(failed && verdict.hint !== null && { hint: verdict.hint }),
    ...(failed && { stderrTail: result.stderrTail.slice(-FAILURE_TAIL_LINES) }),
  });
  if (verdict.status === "ok") ctx.counts.ok++;
  else if (
    verdict.status !== "interrupted" &&
    !willRetry(step, a.planned, verdict.status) &&
    !(verdict.status === "load-timeout" && a.loadRetry)
  ) {
    ctx.recordFailure({
      pipeline: pipeline.name,
      step: step.id,
      device,
      status: verdict.status,
      exitCode: result.exitCode,
      signal: result.signal,
      stderrTail: result.stderrTail.slice(-FAILURE_TAIL_LINES),
      logPath,
      stderrPath,
      hint: verdict.hint,
    });
  }
  return verdict.status;
}

/**
 * The CPUs a GPU step is pinned to: its GPUs' local CPUs, when the plan knows them (cpu-affinity.ts).
 * GPUPLAN_CPU_PINNING=off leaves every step on gpuplan's own CPUs.
 */
async function pinnedCpus(gpus: readonly PlanRegistryEntry[]): Promise<number[] | null> {
  if (gpus.length === 0 || process.env.GPUPLAN_CPU_PINNING === "off") return null;
  if (gpus.some((g) => !g.cpuAffinity?.length)) return null;
  const control = await loadAffinityControl();
  return control
    ? stepCpus(
        gpus.map((g) => g.cpuAffinity),
        control.allowed(),
      )
    : null;
}

/**
 * One flat directory, `logs/<pipeline>@<step>[@<attempt>]`, then `.out.log` and `.err.log` for a
 * plain step's stdout and stderr, `.log` for a worker task. Flat because a directory per pipeline
 * cost a create each, the dearest part of a one-step pipeline's overhead on a busy ext4 (bench:run).
 * Unambiguous: safeName turns `@` into `_`, a step id is unique in its pipeline, and the
 * endings differ. An ok step that printed nothing leaves no files (run-step.ts).
 */
function stepLogPaths(
  runDir: string,
  pipeline: string,
  step: PlannedStep,
  attempt: number,
): { logPath: string; stderrPath: string | null } {
  const base = join(
    runDir,
    "logs",
    `${safeName(pipeline)}@${safeName(step.id)}${attempt > 1 ? `@${attempt}` : ""}`,
  );
  return step.worker
    ? { logPath: `${base}.log`, stderrPath: null }
    : { logPath: `${base}.out.log`, stderrPath: `${base}.err.log` };
}

/** A plain step: its own process, classified by how it ended. */
async function runPlainStep(step: PlannedStep, device: string, process: StepProcessOptions) {
  const result = await runStepProcess(process);
  return { result, verdict: classifyEnding(result, step.timeoutMs, device) };
}
