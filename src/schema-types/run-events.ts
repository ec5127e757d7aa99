/* Generated from schemas/run-events.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * One line of a run's events: `<run dir>/events.jsonl`, the `--events FILE` copy, and stdout with `--ui json` (which ends with one `run.summary` line, unless the run stopped on an error: that is said on stderr and by the exit code). Every event has ts, event, run, pipeline, step and device, in that order; the rest depends on `event`. Version: the `schema` field of `run.start` (gpuplan/run-events@1); a change that can break a reader bumps it.
 */
export type GpuplanRunEvent =
  | RunStartEvent
  | RunEndEvent
  | RunSummaryEvent
  | LockWaitEvent
  | LockAcquiredEvent
  | LockReleasedEvent
  | StepStartEvent
  | StepEndEvent
  | StepSkipEvent
  | StepOomEvent
  | StepTimeoutEvent
  | StepOverReservationEvent
  | StepRetryEvent
  | MemorySnapshotEvent
  | ModelLoadStartEvent
  | ModelLoadCompleteEvent
  | ModelInferenceStartEvent
  | ModelInferenceEndEvent
  | ModelCacheStoreEvent
  | ModelCacheReuseEvent
  | ModelCacheEvictEvent
  | ModelCleanupEvent
  | SlurmSubmitEvent
  | SlurmTaskEvent
  | SlurmUnansweredEvent;
/**
 * ISO 8601, UTC, with milliseconds.
 */
export type Timestamp = string;
/**
 * The run's id (`20261122T011500Z-3fa9c1`).
 */
export type RunId = string;
/**
 * At most 365 days, as a pipeline file's durations: compile --history learns estimates from them.
 */
export type Milliseconds = number;
/**
 * An exact integer (at most 2^53 - 1): compile --history learns VRAM budgets from byte counts.
 */
export type Count = number;
/**
 * cuda:N, cuda:N/migK, rocm:N, or cpu.
 */
export type Device = string;
/**
 * How an attempt ended. load-timeout: a worker step's worker did not answer {"ready": true} within ready_timeout. lock-timeout: the step never started, its slot wait ran past --lock-timeout.
 */
export type StepStatus = "ok" | "error" | "oom" | "timeout" | "load-timeout" | "lock-timeout" | "interrupted";
/**
 * 1-based; the number in the attempt's log file names. A warm worker's load-timeout retry does not use up an on_oom attempt, so attempt numbers then run ahead of them.
 */
export type Attempt = number;
/**
 * Slot numbers (never empty).
 */
export type SlotNumbers = number[];
/**
 * The framework whose out-of-memory message the step printed.
 */
export type OomFramework = "pytorch" | "jax" | "tensorflow" | "cupy" | "hip";
/**
 * The on_oom ladder's rung the next attempt is (retries and fallback: retry, then cpu); absent for a load-timeout retry of the first attempt.
 */
export type OomRungKind = "retry" | "wait" | "exclusive" | "other-gpu" | "smaller" | "cpu";
export type EvictReason = "expired" | "replacement" | "caller_disabled" | "error" | "manual" | "shutdown";

export interface RunStartEvent {
  ts: Timestamp;
  event: "run.start";
  run: RunId;
  pipeline: null;
  step: null;
  device: null;
  schema: "gpuplan/run-events@1";
  /**
   * The selected pipelines.
   */
  pipelines: string[];
  runDir: string;
  /**
   * How the plan's GPUs (of the selected pipelines) were bound to this machine's before anything started: the same UUID when present, else a free GPU of the same kind. Absent for a run without GPUs.
   */
  bindings?: RunStartBinding[];
}
export interface RunStartBinding {
  /**
   * The plan's device id (cuda:3): the id events and logs use.
   */
  gpu: string;
  /**
   * The live GPU's UUID: what the steps see.
   */
  uuid: string;
  pciBusId: string | null;
  /**
   * The live GPU's own id on this machine.
   */
  liveGpu: string;
  /**
   * The UUID the plan recorded.
   */
  planUuid: string;
  /**
   * True when another GPU of the same kind stands in for the planned UUID.
   */
  replaced: boolean;
}
export interface RunEndEvent {
  ts: Timestamp;
  event: "run.end";
  run: RunId;
  pipeline: null;
  step: null;
  device: null;
  durationMs: Milliseconds;
  status: "ok" | "failed" | "interrupted";
  ok: Count;
  failed: Count;
  skipped: Count;
}
/**
 * The last line of `--ui json` only (not in events.jsonl): the run summed up. `ok` counts the steps an earlier attempt of the run finished (--resume) too.
 */
export interface RunSummaryEvent {
  ts: Timestamp;
  event: "run.summary";
  run: RunId;
  pipeline: null;
  step: null;
  device: null;
  runDir: string;
  ok: Count;
  failed: Count;
  skipped: Count;
  /**
   * Stopped by a signal or by a busy GPU under --no-wait.
   */
  interrupted: boolean;
  durationMs: Milliseconds;
  failures: StepFailure[];
  /**
   * The attempts that held more VRAM than their reservation (gpu.step.over_reservation), in order; absent when none did.
   */
  overReservations?: OverReservation[];
  /**
   * A run on Slurm interrupted where scancel failed: the run's Slurm job ids, which may still be queued or running. `--resume` is refused until they have left Slurm (scancel them, or wait: `gpuplan status RUN`). Absent otherwise.
   *
   * @minItems 1
   */
  uncancelledJobs?: [string, ...string[]];
}
export interface StepFailure {
  pipeline: string;
  step: string;
  device: Device;
  status: StepStatus;
  exitCode: number | null;
  signal: string | null;
  /**
   * The last lines of its stderr (or a worker task's log).
   */
  stderrTail: string[];
  /**
   * stdout's log (a worker task's whole log); empty when the step never started.
   */
  logPath: string;
  /**
   * A plain step's stderr log.
   */
  stderrPath?: string | null;
  hint: string | null;
}
export interface OverReservation {
  pipeline: string;
  step: string;
  device: Device;
  attempt: Attempt;
  peakVramBytes: Count;
  reservationBytes: Count;
}
/**
 * A pipeline waits for a slot of its GPU (step null), or an exclusive step for every slot (step set). Only when there is a wait. The lock events' `slots`: how many it wants (wait), the slot numbers it holds now (acquired), the slot numbers given back or kept for the run's warm workers (released).
 */
export interface LockWaitEvent {
  ts: Timestamp;
  event: "gpu.lock.wait";
  run: RunId;
  pipeline: string;
  step: string | null;
  device: Device;
  gpu: Device;
  /**
   * How many slots it wants: 1, or all of them for an exclusive step.
   */
  slots: number;
  exclusive: boolean;
  /**
   * Who holds the GPU's slots now (a pipeline's wait only).
   */
  holders?: SlotHolderRef[];
}
export interface SlotHolderRef {
  pid: number;
  pipeline: string;
  step: string | null;
  since: string;
}
export interface LockAcquiredEvent {
  ts: Timestamp;
  event: "gpu.lock.acquired";
  run: RunId;
  pipeline: string;
  step: string | null;
  device: Device;
  gpu: Device;
  slots: SlotNumbers;
  waitedMs: Milliseconds;
  exclusive: boolean;
}
export interface LockReleasedEvent {
  ts: Timestamp;
  event: "gpu.lock.released";
  run: RunId;
  pipeline: string;
  step: string | null;
  device: Device;
  gpu: Device;
  slots: SlotNumbers;
  exclusive: boolean;
}
/**
 * An attempt starts; `device` is where it runs (cpu after an on_oom fallback).
 */
export interface StepStartEvent {
  ts: Timestamp;
  event: "gpu.step.start";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  attempt: Attempt;
  /**
   * stdout's log (a worker task's whole log).
   */
  logPath: string;
  /**
   * A plain step's stderr log.
   */
  stderrPath?: string;
  /**
   * The CPUs it is pinned to (0-15,32-47), when pinned to its GPU's.
   */
  cpus?: string;
}
/**
 * An attempt ended (or, with lock-timeout, never started). Whether another attempt follows is decided from the step's plan (on_oom) and its attempts so far; a `gpu.step.retry` then follows at once.
 */
export interface StepEndEvent {
  ts: Timestamp;
  event: "gpu.step.end";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  status: StepStatus;
  exitCode: number | null;
  /**
   * The signal that ended it (SIGKILL).
   */
  signal: string | null;
  durationMs: Milliseconds;
  attempt: Attempt;
  /**
   * Absent when the step never started; the file is gone when an ok step printed nothing.
   */
  logPath?: string;
  stderrPath?: string;
  framework?: OomFramework;
  /**
   * At most 1 PiB, as a GPU's memory in an inventory (compile --history learns `vram` from it). Most GPU memory the attempt's processes held at once, from the per-process readings (NVML) taken while it ran; for a worker task, its worker's processes, starting from what a worker that was already warm last held. Absent where none were taken (a CPU attempt, a driver without per-process readings, an attempt that ended before the first reading).
   */
  peakVramBytes?: number;
  /**
   * What to do about a failed attempt.
   */
  hint?: string;
  /**
   * A failed attempt's last stderr lines (at most 10).
   */
  stderrTail?: string[];
}
export interface StepSkipEvent {
  ts: Timestamp;
  event: "gpu.step.skip";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  /**
   * In words: completed in an earlier run, needs plate-3/segment, which failed, …
   */
  reason: string;
  /**
   * completed: an earlier attempt of this run finished it (--resume; counted ok). dependency-failed: an earlier step of its pipeline failed. no-slot: its pipeline's slot wait ran past --lock-timeout.
   */
  cause: "completed" | "dependency-failed" | "no-slot";
}
/**
 * Informational: the attempt ran out of memory (its gpu.step.end follows).
 */
export interface StepOomEvent {
  ts: Timestamp;
  event: "gpu.step.oom";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  framework: OomFramework | null;
  attempt: Attempt;
}
/**
 * Informational: the attempt ran past its timeout (its gpu.step.end follows).
 */
export interface StepTimeoutEvent {
  ts: Timestamp;
  event: "gpu.step.timeout";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  timeoutMs: number | null;
  attempt: Attempt;
}
/**
 * The attempt's processes held more VRAM at once on one of its GPUs than its reservation: the pipeline's reservation when the plan has one, else the step's `vram`. Measured from the driver's per-process readings (NVML; not where the driver lists no processes or pids of another pid namespace), so only where a reading saw it. Its gpu.step.end follows, with the same peakVramBytes.
 */
export interface StepOverReservationEvent {
  ts: Timestamp;
  event: "gpu.step.over_reservation";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  attempt: Attempt;
  peakVramBytes: Count;
  reservationBytes: Count;
}
/**
 * Another attempt follows the one that just ended; `attempt` is the one about to start, `device` where it runs, `rung` what the on_oom ladder tries (sent once the rung is in place: after a wait, an exclusive upgrade or a move to another GPU). Order: gpu.step.end, gpu.step.retry, gpu.step.start.
 */
export interface StepRetryEvent {
  ts: Timestamp;
  event: "gpu.step.retry";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  attempt: Attempt;
  /**
   * Attempts the step may have, this one included.
   */
  of: number;
  reason: "oom" | "load-timeout";
  /**
   * cuda:N, cuda:N/migK, rocm:N, or cpu.
   */
  nextDevice?: string;
  rung?: OomRungKind;
  /**
   * GPUPLAN_OOM_SCALE for the next attempt (1 until a smaller rung; its scale times the last otherwise).
   */
  scale?: number;
  /**
   * At most 365 days, as a pipeline file's durations: compile --history learns estimates from them.
   */
  waitedMs?: number;
  /**
   * wait and other-gpu: the free memory of the GPU the next attempt runs on when it was chosen (null where no reading is known).
   */
  freeBytes?: number | null;
  /**
   * A rung that could not do what it says and why the attempt runs as it does (no other GPU had more free memory, no reading of free memory, the wait ran out).
   */
  note?: string;
}
/**
 * Memory of the GPUs a step sees (or host memory for a CPU step) at its start and end; sent when the reading comes, never waited for by the step.
 */
export interface MemorySnapshotEvent {
  ts: Timestamp;
  event: "gpu.memory.snapshot";
  run: RunId;
  pipeline: string;
  step: string;
  device: Device;
  at: "step.start" | "step.end" | "oom";
  /**
   * Never empty.
   */
  gpus: MemoryReading[];
}
export interface MemoryReading {
  /**
   * Device id, or cpu for host memory (/proc/meminfo).
   */
  gpu: string;
  uuid?: string;
  usedBytes: number | null;
  freeBytes: number | null;
  totalBytes: number;
}
/**
 * A warm worker starts loading. The gpu.model.* events use sparkle_motion's names (snake_case fields); pipeline and step are null for what no task caused (expiry, shutdown).
 */
export interface ModelLoadStartEvent {
  ts: Timestamp;
  event: "gpu.model.load_start";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  ready_timeout_ms: Milliseconds;
}
export interface ModelLoadCompleteEvent {
  ts: Timestamp;
  event: "gpu.model.load_complete";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  duration_ms: Milliseconds;
  pid: number | null;
}
export interface ModelInferenceStartEvent {
  ts: Timestamp;
  event: "gpu.model.inference_start";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  /**
   * The task id (pipeline/step#attempt).
   */
  task: string;
}
export interface ModelInferenceEndEvent {
  ts: Timestamp;
  event: "gpu.model.inference_end";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  task: string;
  duration_ms: Milliseconds;
  status: "ok" | "error" | "oom" | "timeout" | "load-timeout" | "interrupted";
}
/**
 * The worker stays warm after its task, for ttl_s of idleness.
 */
export interface ModelCacheStoreEvent {
  ts: Timestamp;
  event: "gpu.model.cache_store";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  ttl_s: number;
}
export interface ModelCacheReuseEvent {
  ts: Timestamp;
  event: "gpu.model.cache_reuse";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  idle_ms: Milliseconds;
}
/**
 * The worker is being stopped; gpu.model.cleanup follows once it is gone.
 */
export interface ModelCacheEvictEvent {
  ts: Timestamp;
  event: "gpu.model.cache_evict";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  reason: EvictReason;
}
export interface ModelCleanupEvent {
  ts: Timestamp;
  event: "gpu.model.cleanup";
  run: RunId;
  pipeline: string | null;
  step: string | null;
  device: Device;
  model_key: string;
  allocated_devices: string[];
  reason: EvictReason;
  exitCode: number | null;
  signal: string | null;
  /**
   * Its GPUs' memory once it is gone, when known.
   */
  memory?: MemoryReading[];
}
/**
 * `gpuplan run --executor slurm` submitted one job array (one task per pipeline).
 */
export interface SlurmSubmitEvent {
  ts: Timestamp;
  event: "slurm.submit";
  run: RunId;
  pipeline: null;
  step: null;
  device: null;
  /**
   * The array's job id, as sbatch --parsable printed it.
   */
  job: string;
  /**
   * The sbatch script, in the run folder's slurm/.
   */
  script: string;
  /**
   * Array task i runs pipelines[i].
   */
  pipelines: string[];
}
/**
 * A pipeline's Slurm array task changed state, as the submitting gpuplan saw it (squeue) and the task reported it (its node and GPUs).
 */
export interface SlurmTaskEvent {
  ts: Timestamp;
  event: "slurm.task";
  run: RunId;
  pipeline: string;
  step: null;
  device: null;
  /**
   * ARRAYJOB_TASK, as squeue prints it.
   */
  job: string;
  /**
   * Slurm's job state: PENDING, RUNNING, COMPLETED, FAILED, TIMEOUT, OUT_OF_MEMORY, NODE_FAIL, CANCELLED, …
   */
  state: string;
  /**
   * Slurm's reason (Resources, Priority, NonZeroExitCode, …); null for None.
   */
  reason: string | null;
  /**
   * The node it runs or ran on.
   */
  node: string | null;
  /**
   * The GPUs Slurm gave it as node-wide indices (SLURM_JOB_GPUS), as the task reported them.
   */
  gpus: string | null;
  /**
   * The batch script's exit status once it ended (null: killed by a signal, or not ended).
   */
  exitCode: number | null;
}
/**
 * The follower of `gpuplan run --executor slurm` asked Slurm how the run's tasks stand and got no answer (the command past its time limit, failing, or not there); said once when it starts, until the command answers again. The jobs go on in Slurm meanwhile; squeue failing for 2 minutes ends the follow (slurm-command-failed).
 */
export interface SlurmUnansweredEvent {
  ts: Timestamp;
  event: "slurm.unanswered";
  run: RunId;
  pipeline: null;
  step: null;
  device: null;
  /**
   * The command that did not answer.
   */
  command: "squeue" | "sacct";
  /**
   * What happened and what the follower does about it, e.g. `squeue did not answer in 15 s`.
   */
  message: string;
}
