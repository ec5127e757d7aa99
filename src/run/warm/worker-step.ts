/**
 * A worker step's attempt: one task for the warm worker of its key on its device, reported like
 * a plain step (same log file, same statuses, plus `load-timeout`), so the executor's journal,
 * retries and failure report need not know the difference.
 */
import type { PlannedPipeline, PlannedStep, PlanRegistryEntry } from "../../schema-types/plan.js";
import type { SlotLease } from "../lock/types.js";
import { type LogLost, lazyLog } from "../record/lazy-log.js";
import { type Classification, detectOom } from "../step/classify-failure.js";
import type { StepProcessResult } from "../step/step-process.js";
import { clipWorkerText } from "./protocol.js";
import type { WarmTaskOutcome, WorkerPool } from "./worker-pool.js";

export interface WorkerTaskInput {
  worker: NonNullable<PlannedStep["worker"]>;
  pipeline: PlannedPipeline;
  step: PlannedStep;
  attempt: number;
  /** cuda:N, or cpu (a CPU step or the CPU fallback). */
  device: string;
  /** The registry entries of the GPUs the step sees (empty on the CPU). */
  gpus: readonly PlanRegistryEntry[];
  leases: readonly SlotLease[];
  /** CPUs to pin a newly started worker to, or null. */
  cpus: readonly number[] | null;
  env: Record<string, string>;
  cwd: string;
  logPath: string;
  signal: AbortSignal;
  onLine: (stream: "stdout" | "stderr", line: string) => void;
  /** The task's log lost output (lazy-log.ts). */
  onLogLost?: LogLost;
  /** WarmTaskRequest.onWorker and onKept. */
  onWorker?: (pid: number, reused: boolean) => void;
  onKept?: () => Promise<void>;
}

export async function runWorkerTask(
  pool: WorkerPool,
  input: WorkerTaskInput,
): Promise<{ result: StepProcessResult; verdict: Classification }> {
  const { step, pipeline, worker } = input;
  const log = lazyLog(input.logPath, input.onLogLost);
  const outcome = await pool.run({
    key: worker.key,
    device: input.device,
    uuids: input.gpus.map((g) => g.uuid),
    allocatedDevices: input.gpus.length > 0 ? input.gpus.map((g) => g.gpu) : ["cpu"],
    cpus: input.cpus,
    argv: worker.argv,
    cwd: input.cwd,
    env: input.env,
    ownEnv: step.env,
    leases: input.leases,
    readyTimeoutMs: worker.readyTimeoutMs,
    keepWarm: step.keepWarm,
    exclusive: step.exclusive,
    vramBytes: step.vramBytes ?? 0,
    budgetBytes: input.gpus[0]?.memoryBudgetBytes ?? null,
    task: {
      id: `${pipeline.name}/${step.id}#${input.attempt}`,
      pipeline: pipeline.name,
      step: step.id,
      args: { matrix: { ...pipeline.matrix }, argv: [...worker.args] },
    },
    timeoutMs: step.timeoutMs,
    onLine: (stream, line) => {
      input.onLine(stream, line);
      // Backpressure: the worker's output is not read faster than its step log is written.
      return log.write(`${line}\n`) ? undefined : log.drained();
    },
    signal: input.signal,
    ...(input.onWorker && { onWorker: input.onWorker }),
    ...(input.onKept && { onKept: input.onKept }),
  });
  if (outcome.message !== null && outcome.status !== "ok") log.write(`gpuplan: ${outcome.message}\n`);
  await new Promise<void>((resolve) => log.end(outcome.status !== "ok", resolve));
  // The log (above) has the whole of it; what is said and recorded of it is cut (protocol.ts).
  const said = outcome.message === null ? null : clipWorkerText(outcome.message);
  const result: StepProcessResult = {
    pid: null,
    exitCode: outcome.exit?.exitCode ?? (outcome.status === "ok" ? 0 : null),
    signal: outcome.exit?.signal ?? null,
    timedOut: outcome.status === "timeout",
    interrupted: outcome.status === "interrupted",
    stderrTail: said !== null ? [...outcome.stderrTail, said] : outcome.stderrTail,
    durationMs: outcome.durationMs,
  };
  return {
    result,
    verdict: classifyWorkerOutcome(outcome, worker.readyTimeoutMs, input.device, step.timeoutMs),
  };
}

/** The step status and a hint for a person, from how the task (or the load) went. */
function classifyWorkerOutcome(
  outcome: WarmTaskOutcome,
  readyTimeoutMs: number,
  device: string,
  timeoutMs: number | null,
): Classification {
  const during = outcome.phase === "load" ? "while loading" : "during its task";
  switch (outcome.status) {
    case "ok":
      return { status: "ok", framework: null, hint: null };
    case "interrupted":
      return { status: "interrupted", framework: null, hint: "resume with gpuplan run --resume" };
    case "load-timeout":
      return {
        status: "load-timeout",
        framework: null,
        hint: `the worker did not answer {"ready": true} within ready_timeout (${readyTimeoutMs} ms); raise \`worker.ready_timeout\` or check that it prints the ready line`,
      };
    case "timeout":
      return {
        status: "timeout",
        framework: null,
        hint: `the task ran past the step's timeout${timeoutMs !== null ? ` (${timeoutMs} ms)` : ""}; the worker was stopped`,
      };
    case "oom": {
      const framework = detectOom([...outcome.stderrTail, outcome.message ?? ""]);
      const where = device === "cpu" ? "host memory" : "GPU memory";
      return {
        status: "oom",
        framework,
        hint: `the worker ran out of ${where} ${during}; lower its batch size, raise \`vram\` and recompile, or add on_oom: { retries: 1, fallback: cpu }`,
      };
    }
    case "error":
      return {
        status: "error",
        framework: null,
        hint: `the worker failed ${during}: ${outcome.message === null ? "see its log" : clipWorkerText(outcome.message)}; the next task starts a fresh worker`,
      };
  }
}
