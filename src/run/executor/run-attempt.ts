/**
 * One attempt of one step: its environment and log file, a process of its own or a task for a
 * warm worker, then how it ended — classified, journaled (before it is reported, so a resume
 * never redoes a step reported ok) and emitted. Whether another attempt follows is not decided
 * here (outcome/attempt-decision.ts).
 */
import { resolve } from "node:path";
import type { PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../../schema-types/plan.js";
import { formatCpuList } from "../../units/cpu-list.js";
import type { SlotLease } from "../lock/types.js";
import { exceededReservation } from "../outcome/reservation.js";
import type { StepStatus } from "../record/events.js";
import { stepLogPaths } from "../record/log-names.js";
import { bootIdEntry } from "../step/boot-id.js";
import { classifyEnding } from "../step/classify-failure.js";
import { processStartTicks } from "../step/process-group.js";
import { type AffinityControl, loadAffinityControl, stepCpus } from "../step/spawn/cpu-affinity.js";
import { buildStepEnvironment, visibleGpus } from "../step/step-env.js";
import { runStepProcess, type StepProcessOptions } from "../step/step-process.js";
import { runWorkerTask } from "../warm/worker-step.js";
import { journalStep, type StepContext } from "./contexts.js";
import { snapshotMemory } from "./memory-snapshots.js";

/** Lines of stderr a failed attempt's gpu.step.end carries (the log has the rest). */
const FAILURE_TAIL_LINES = 10;

export interface Attempt {
  pipeline: PlannedPipeline;
  step: PlannedStep;
  /** The number in log names and events. */
  attempt: number;
  onCpu: boolean;
  leases: readonly SlotLease[];
  /** GPUPLAN_OOM_SCALE: 1, or less after an on_oom ladder's smaller rungs. */
  oomScale?: number;
  /** Called as soon as the process has ended, before the journal flush (which comes before the report). */
  onEnded?: (status: StepStatus) => void;
}

export async function runAttempt(ctx: StepContext, a: Attempt): Promise<StepStatus> {
  const { run, registry } = ctx;
  const { pipeline, step, attempt, onCpu, leases } = a;
  const device = onCpu ? "cpu" : step.device;
  const { logPath, stderrPath } = stepLogPaths(ctx.runDir, pipeline.name, step, attempt);
  const env = buildStepEnvironment(
    {
      run,
      pipeline,
      step,
      registry,
      onCpu,
      attempt,
      ...(a.oomScale !== undefined && { oomScale: a.oomScale }),
    },
    ctx.env,
  );
  const gpus = visibleGpus({ run, pipeline, step, registry, onCpu });
  const cpus = ctx.cpuPinning ? await pinnedCpus(gpus) : null;
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
  const cwd = resolve(ctx.baseDir, step.cwd ?? ".");
  const onLine = (stream: "stdout" | "stderr", line: string) =>
    ctx.onOutput?.(pipeline.name, step.id, stream, line);
  // Its processes' VRAM while it runs, on the GPUs it sees: a plain step's process group, or the
  // worker's that takes a worker task (the model it holds is the task's too).
  const watchKey = `${pipeline.name}\u0000${step.id}\u0000${attempt}`;
  const watchVram = device !== "cpu" && gpus.length > 0 ? ctx.vram : undefined;
  // Not waited for (no fdatasync): enough for a resume after gpuplan is killed to find it.
  const recordStart = (pid: number, startTicks: number | null = null): void =>
    void ctx.journal.append(
      {
        type: "start",
        ts: new Date().toISOString(),
        pipeline: pipeline.name,
        step: step.id,
        attempt,
        device,
        pid,
        startTicks: startTicks ?? processStartTicks(pid),
        ...bootIdEntry(),
      },
      false,
    );
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
        signal: ctx.stop,
        onLine,
        ...(ctx.onLogLost && { onLogLost: ctx.onLogLost }),
        // The worker's pid is the task's, as a plain step's is: a resume after gpuplan is killed
        // waits for a worker still running the task instead of giving it to a new worker beside it.
        onWorker: (pid: number, reused: boolean) => {
          recordStart(pid);
          watchVram?.start(
            watchKey,
            pid,
            gpus.map((g) => g.uuid),
            reused ? "reused" : "new",
          );
        },
        ...(watchVram && { onKept: () => watchVram.readNow(ctx.stop) }),
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
        spawn: ctx.spawn,
        timeoutMs: step.timeoutMs,
        killGraceMs: ctx.killGraceMs,
        signal: ctx.stop,
        ...(ctx.interruptSignal && { interruptSignal: ctx.interruptSignal }),
        ...(ctx.killNow && { killNow: ctx.killNow }),
        onLine,
        onStart: (pid: number, startTicks: number | null) => {
          recordStart(pid, startTicks);
          watchVram?.start(
            watchKey,
            pid,
            gpus.map((g) => g.uuid),
          );
        },
      });
  const peakVramBytes = watchVram?.stop(watchKey) ?? null;
  const { status } = verdict;
  snapshotMemory(ctx, pipeline, step, device, onCpu, status === "oom" ? "oom" : "step.end");
  a.onEnded?.(status);
  const where = { pipeline: pipeline.name, step: step.id, device };
  if (status === "timeout")
    ctx.emit({ event: "gpu.step.timeout", ...where, timeoutMs: step.timeoutMs, attempt });
  if (status === "oom") ctx.emit({ event: "gpu.step.oom", ...where, framework: verdict.framework, attempt });
  // Truth at run time: what the attempt really held against what it was admitted with.
  const reserved = exceededReservation(pipeline, peakVramBytes);
  if (reserved !== null && peakVramBytes !== null)
    ctx.emit({
      event: "gpu.step.over_reservation",
      ...where,
      attempt,
      peakVramBytes,
      reservationBytes: reserved,
    });
  // Flushed before the step is reported done: a resume never redoes a step reported ok.
  await journalStep(ctx, pipeline.name, step, {
    status,
    attempt,
    device,
    exitCode: result.exitCode,
    durationMs: result.durationMs,
  });
  const failed = status !== "ok" && status !== "interrupted";
  const hint = failed ? fallbackHint(step, onCpu, status, verdict.hint) : null;
  ctx.emit({
    event: "gpu.step.end",
    ...where,
    status,
    exitCode: result.exitCode,
    signal: result.signal,
    durationMs: result.durationMs,
    attempt,
    logPath,
    ...(stderrPath && { stderrPath }),
    ...(verdict.framework && { framework: verdict.framework }),
    ...(peakVramBytes !== null && { peakVramBytes }),
    ...(hint !== null && { hint }),
    ...(failed && { stderrTail: result.stderrTail.slice(-FAILURE_TAIL_LINES) }),
  });
  return status;
}

/**
 * A GPU step's on_oom CPU fallback that failed otherwise than by running out of memory: what
 * sent it there is said too, since its own last lines (a framework finding no GPU) hide it.
 */
function fallbackHint(
  step: PlannedStep,
  onCpu: boolean,
  status: StepStatus,
  hint: string | null,
): string | null {
  if (!onCpu || !step.gpu || step.uuid === null || status === "oom") return hint;
  return `this was the on_oom fallback to the CPU (CUDA_VISIBLE_DEVICES empty), after the step ran out of GPU memory; ${hint ?? "see its log"}. A step that cannot run on the CPU should not end its on_oom ladder with cpu`;
}

/**
 * The CPUs a GPU step is pinned to: its GPUs' local CPUs, when the plan knows them (cpu-affinity.ts).
 * (`cpuPinning: false` — --cpu-pinning off, GPUPLAN_CPU_PINNING=off — never asks.)
 */
async function pinnedCpus(gpus: readonly PlanRegistryEntry[]): Promise<number[] | null> {
  if (gpus.length === 0) return null;
  if (gpus.some((g) => !g.cpuAffinity?.length)) return null;
  const control = await loadAffinityControl();
  return control
    ? stepCpus(
        gpus.map((g) => g.cpuAffinity),
        ownCpus(control),
      )
    : null;
}

/** How long one look at gpuplan's own CPU mask serves the steps that start after it. */
const OWN_CPUS_TTL_MS = 1000;
let ownCpusSeen: { at: number; cpus: readonly number[] } | undefined;

/**
 * The CPUs gpuplan may run on, looked at once a second rather than at every GPU step: the mask
 * changes only when someone changes it (taskset -p, a cpuset), and a CPU taken away meanwhile
 * only makes that step's pinning fail — it then starts unpinned (cpu-affinity.ts, withCpus).
 */
function ownCpus(control: AffinityControl): readonly number[] {
  const at = performance.now();
  if (!ownCpusSeen || at - ownCpusSeen.at >= OWN_CPUS_TTL_MS) ownCpusSeen = { at, cpus: control.allowed() };
  return ownCpusSeen.cpus;
}

/** A plain step: its own process, classified by how it ended. */
async function runPlainStep(step: PlannedStep, device: string, process: StepProcessOptions) {
  const result = await runStepProcess(process);
  return { result, verdict: classifyEnding(result, step.timeoutMs, device) };
}
