/**
 * What a report shows, as plain data: the timeline's lanes and bars, the memory series and the
 * steps table of a run (or of a plan before it runs). Built by run-report.ts and plan-report.ts
 * from a run folder or a plan, drawn by src/ui/report (HTML) and trace.ts (Chrome trace). Times
 * are milliseconds on the report's axis: 0 is the first run.start, and long pauses between the
 * sessions of a resumed run are cut short (`breaks`) so that they do not squash the work.
 */

/** How an attempt ended, as the timeline colours it. */
export type Outcome =
  | "ok"
  | "failed"
  | "timeout"
  | "oom"
  /** It failed (OOM, a worker's load timeout) and another attempt followed. */
  | "retried"
  /** The on_oom CPU fallback attempt, ok. */
  | "fallback"
  | "interrupted"
  /** Finished ok in an earlier session; the resumed session skipped the step. */
  | "kept"
  /** A plan's estimate, not an attempt. */
  | "planned";

export interface Lane {
  kind: "slot" | "host";
  /** The GPU (cuda:N) of a slot lane; null for a host lane. */
  gpu: string | null;
  /** Slot number on its GPU, or host lane number. */
  index: number;
  label: string;
}

/** One bar per step attempt (or planned step): in lane `lane`, from `start` to `end`. */
export interface Bar {
  lane: number;
  start: number;
  end: number;
  /** The steps-table row this is an attempt of. */
  row: number;
  attempt: number;
  outcome: Outcome;
  /** The status the attempt ended with (ok, error, oom, timeout, load-timeout, interrupted); null when it never ended. */
  status: string | null;
  device: string;
  /** A host step of a GPU pipeline (it runs in its pipeline's slot lane, on the CPU). */
  onHost: boolean;
  durationMs: number;
  exitCode: number | null;
  signal: string | null;
  framework: string | null;
  hint: string | null;
  logPath: string | null;
  stderrPath: string | null;
  /** The last lines of its stderr. */
  stderrTail: string[];
  /** Peak VRAM of its processes, when per-process readings were taken. */
  peakVramBytes: number | null;
  /** A warm worker loaded for it: the load's start and end on the axis. */
  load: [number, number] | null;
  /** A warm worker was reused for it. */
  reused: boolean;
}

/** A slot a pipeline held (its own, another GPU's of a multi-GPU pipeline, or every slot for an exclusive step). */
export interface Hold {
  lane: number;
  start: number;
  end: number;
  pipeline: number;
  kind: "slot" | "exclusive";
}

/** Time a step spent waiting for its GPU's other slots (an exclusive step), in its own lane. */
export interface Wait {
  lane: number;
  start: number;
  end: number;
  row: number;
}

/** How many pipelines waited for a slot of a GPU over time (a step function). */
export interface Queue {
  gpu: string;
  /** [time, pipelines waiting from then on]. */
  points: [number, number][];
  /** Most waiting at once. */
  max: number;
}

/** A step that did not run in a session: its pipeline's lane (when it has one) and when. */
export interface Skip {
  lane: number | null;
  at: number;
  row: number;
  cause: string;
  reason: string;
}

export interface MemorySeries {
  /** cuda:N, or `host` for host memory (CPU steps). */
  gpu: string;
  uuid: string | null;
  name: string;
  kind: "used" | "reserved";
  totalBytes: number | null;
  budgetBytes: number | null;
  /** [time, bytes]: used (readings) or reserved (the plan's pipelines on it at that time). */
  points: [number, number][];
}

/** One row per step of the run (or of the plan). */
export interface StepRow {
  pipeline: number;
  step: string;
  device: string;
  uuid: string | null;
  /** The outcome of its last attempt; `skipped` when it never ran; `kept` when an earlier session finished it. */
  outcome: Outcome | "skipped" | "not-run";
  attempts: number;
  /** Its last attempt's duration (planned: the estimate). */
  durationMs: number | null;
  estimateMs: number | null;
  /** durationMs ÷ estimateMs of an ok step. */
  estimateRatio: number | null;
  peakVramBytes: number | null;
  vramBytes: number | null;
  budgetBytes: number | null;
  /** Time its pipeline waited for a slot before this, its first step (and an exclusive step's wait). */
  waitMs: number;
  argv: string[];
  exclusive: boolean;
  worker: string | null;
  /** Planned start and end on the axis, when the plan is known. */
  planned: [number, number] | null;
  /** Its bars, first attempt first. */
  bars: number[];
  skipReason: string | null;
}

export interface GpuFacts {
  gpu: string;
  uuid: string;
  name: string;
  memoryBytes: number;
  budgetBytes: number;
  slots: number;
}

export interface Counts {
  steps: number;
  ok: number;
  failed: number;
  oom: number;
  timeout: number;
  retried: number;
  fallback: number;
  interrupted: number;
  kept: number;
  skipped: number;
  notRun: number;
  attempts: number;
}

export interface ReportHeader {
  kind: "run" | "plan";
  title: string;
  runId: string | null;
  runDir: string | null;
  planName: string | null;
  /** The pipeline file the plan was compiled from. */
  pipelineFile: string | null;
  /** What the run was started from (a plan or pipeline file), or the plan file reported on. */
  input: string | null;
  gpus: GpuFacts[];
  startedAt: string | null;
  endedAt: string | null;
  wallMs: number | null;
  /**
   * ok, failed, interrupted; `unfinished` when no session ended (still running, or gpuplan died);
   * a run that went to Slurm: what `gpuplan runs` says (`submitted`, `running` too).
   */
  status: string;
  sessions: number;
  counts: Counts;
  /** The run's makespan: the time its sessions spent, pauses between them left out. */
  makespanMs: number | null;
  planMakespanMs: number | null;
  lowerBoundMs: number | null;
  maxParallelPipelines: number | null;
  /** What the report could not read or had to guess. */
  notes: string[];
}

/** Why a pipeline runs where it does (plan reports). */
export interface Placement {
  pipeline: number;
  gpus: string[];
  backend: string;
  estimateMs: number;
  startMs: number;
  reservationBytes: number;
  /** Each GPU it does not use, and why. */
  notOn: { gpu: string; reason: string }[];
  note: string | null;
}

export interface ReportModel {
  header: ReportHeader;
  /** Names are stored once; bars and rows refer to them by index. */
  pipelines: string[];
  axis: { spanMs: number; breaks: { at: number; pausedMs: number }[] };
  lanes: Lane[];
  bars: Bar[];
  holds: Hold[];
  waits: Wait[];
  queues: Queue[];
  skips: Skip[];
  /** The plan's bars beside a run's (the overlay), in the lanes its pipelines ran in. */
  planned: { lane: number; start: number; end: number; row: number }[];
  memory: MemorySeries[];
  rows: StepRow[];
  placements: Placement[];
}
