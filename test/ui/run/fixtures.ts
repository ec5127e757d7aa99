/** A small plan (two GPUs with two slots, a CPU pipeline) and an event builder with fixed clocks. */
import type { RunEvent, RunEventName, RunEventOf } from "../../../src/run/record/events.js";
import type { GpuplanPlan, PlannedPipeline, PlannedStep } from "../../../src/schema-types/plan.js";
import type { RunSummary } from "../../../src/ui/run/view.js";

export const RUN = "20261122-010000-abcd";
export const T0 = Date.parse("2026-11-22T01:00:00.000Z");
const GIB = 1024 ** 3;

function step(id: string, device: string, exclusive = false, oomRetries = 0): PlannedStep {
  return {
    id,
    device,
    uuid: device === "cpu" ? null : `GPU-${device}`,
    argv: ["node", `${id}.js`],
    shell: false,
    cwd: null,
    env: {},
    memory: { input: "numpy", output: "numpy", uses: [] },
    gpu: device !== "cpu",
    vramBytes: null,
    memoryBudgetBytes: null,
    dataBytes: null,
    needs: [],
    conversions: [],
    deviceMap: null,
    exclusive,
    timeoutMs: null,
    estimateMs: 1000,
    onOom: { retries: oomRetries, fallback: null },
    keepWarm: false,
    worker: null,
    source: `pipeline.yaml#/pipelines/0/steps/0`,
  };
}

function pipeline(name: string, gpu: string | null, steps: PlannedStep[]): PlannedPipeline {
  const [first, ...rest] = steps;
  if (!first) throw new Error("a pipeline needs a step");
  return {
    name,
    template: name,
    matrix: {},
    gpu,
    gpus: gpu ? [gpu] : [],
    backend: gpu ? "cuda" : "cpu",
    fellBackToCpu: false,
    estimateMs: 1000,
    estimatedStartMs: 0,
    peakVramBytes: 0,
    reservationBytes: 0,
    steps: [first, ...rest],
  };
}

export function makePlan(): GpuplanPlan {
  return {
    schema: "gpuplan/plan@1",
    gpuplanVersion: "0.1.0",
    name: "cell-painting",
    source: { file: "pipeline.yaml", sha256: "0".repeat(64) },
    inventory: { label: "target:test", fingerprint: `sha256:${"0".repeat(64)}`, gpus: 2 },
    settings: {
      memoryStrategy: "balanced",
      memoryFraction: 0.9,
      platformPriority: ["cuda", "cpu"],
      maxParallelPipelines: 4,
      contextReserveBytes: 0,
      maxWarmPerGpu: 1,
    },
    registry: ["cuda:0", "cuda:1"].map((gpu) => ({
      gpu,
      uuid: `GPU-${gpu}`,
      name: "NVIDIA A100 80GB",
      backend: "cuda" as const,
      pciBusId: null,
      memoryBytes: 80 * GIB,
      memoryBudgetBytes: 72 * GIB,
      warmReserveBytes: 0,
      maxPipelines: 2,
      limitedBy: "configured" as const,
    })),
    pipelines: [
      pipeline("plate-1", "cuda:0", [step("segment", "cuda:0"), step("measure", "cuda:0")]),
      // plate-2/segment may be retried once after an OOM (failureEvents).
      pipeline("plate-2", "cuda:0", [step("segment", "cuda:0", false, 1), step("measure", "cuda:0")]),
      pipeline("plate-3", "cuda:0", [step("segment", "cuda:0"), step("measure", "cuda:0")]),
      pipeline("train", "cuda:1", [step("fit", "cuda:1", true)]),
      pipeline("report", null, [step("export", "cpu")]),
    ],
    summary: {
      pipelines: 5,
      gpuPipelines: 4,
      cpuPipelines: 1,
      steps: 8,
      makespanMs: 0,
      lowerBoundMs: 0,
      lowerBoundBy: "longest-pipeline",
      lowerBoundTerms: { longestPipelineMs: 0, gpuSlotsMs: 0, gpuMemoryMs: 0, hostLanesMs: 0 },
      gpus: [],
    },
    diagnostics: [],
  };
}

export const ALL_PIPELINES = ["plate-1", "plate-2", "plate-3", "train", "report"];

/** What an event says beyond the fields every event has. */
export type EventFields<N extends RunEventName> = Omit<
  RunEventOf<N>,
  "ts" | "event" | "run" | "pipeline" | "step" | "device"
>;

/** An event at T0 + `atMs` (the fixtures are valid events: run-state.test.ts checks them against the schema). */
export function ev<N extends RunEventName>(
  atMs: number,
  event: N,
  pipeline: RunEventOf<N>["pipeline"],
  stepId: RunEventOf<N>["step"],
  device: RunEventOf<N>["device"],
  fields: EventFields<N>,
): RunEventOf<N> {
  return {
    ts: new Date(T0 + atMs).toISOString(),
    event,
    run: RUN,
    pipeline,
    step: stepId,
    device,
    ...fields,
  } as unknown as RunEventOf<N>;
}

export const GIB_BYTES = GIB;

const log = (pipeline: string, step: string, attempt = 1) =>
  `.gpuplan/runs/${RUN}/logs/${pipeline}@${step}${attempt > 1 ? `@${attempt}` : ""}.out.log`;

/** Two pipelines busy on cuda:0, a third waiting for it, the exclusive trainer on cuda:1. */
export function busyEvents(): RunEvent[] {
  return [
    ev(0, "run.start", null, null, null, {
      schema: "gpuplan/run-events@1",
      pipelines: ALL_PIPELINES,
      runDir: `.gpuplan/runs/${RUN}`,
    }),
    ev(10, "gpu.lock.wait", "plate-1", null, "cuda:0", { gpu: "cuda:0", slots: 1, exclusive: false }),
    ev(12, "gpu.lock.acquired", "plate-1", null, "cuda:0", {
      gpu: "cuda:0",
      slots: [0],
      waitedMs: 2,
      exclusive: false,
    }),
    ev(20, "gpu.step.start", "plate-1", "segment", "cuda:0", {
      attempt: 1,
      logPath: log("plate-1", "segment"),
    }),
    ev(30, "gpu.lock.acquired", "plate-2", null, "cuda:0", {
      gpu: "cuda:0",
      slots: [1],
      waitedMs: 0,
      exclusive: false,
    }),
    ev(40, "gpu.step.start", "plate-2", "segment", "cuda:0", {
      attempt: 1,
      logPath: log("plate-2", "segment"),
    }),
    ev(50, "gpu.lock.wait", "plate-3", null, "cuda:0", { gpu: "cuda:0", slots: 1, exclusive: false }),
    ev(60, "gpu.lock.acquired", "train", null, "cuda:1", {
      gpu: "cuda:1",
      slots: [0],
      waitedMs: 0,
      exclusive: false,
    }),
    ev(70, "gpu.lock.wait", "train", "fit", "cuda:1", { gpu: "cuda:1", slots: 2, exclusive: true }),
    ev(80, "gpu.lock.acquired", "train", "fit", "cuda:1", {
      gpu: "cuda:1",
      slots: [0, 1],
      waitedMs: 10,
      exclusive: true,
    }),
    ev(90, "gpu.step.start", "train", "fit", "cuda:1", { attempt: 1, logPath: log("train", "fit") }),
    ev(100, "gpu.memory.snapshot", "plate-1", "segment", "cuda:0", {
      at: "step.start",
      gpus: [
        { gpu: "cuda:0", uuid: "GPU-cuda:0", usedBytes: 30 * GIB, freeBytes: 50 * GIB, totalBytes: 80 * GIB },
      ],
    }),
    ev(200, "gpu.step.start", "report", "export", "cpu", { attempt: 1, logPath: log("report", "export") }),
    ev(12_400, "gpu.step.end", "report", "export", "cpu", {
      status: "ok",
      exitCode: 0,
      signal: null,
      durationMs: 12_200,
      attempt: 1,
      logPath: log("report", "export"),
    }),
  ];
}

/** plate-1/segment runs out of memory after the busy state; plate-2/segment is retried after an OOM. */
export function failureEvents(): RunEvent[] {
  return [
    ...busyEvents(),
    ev(20_000, "gpu.step.end", "plate-1", "segment", "cuda:0", {
      status: "oom",
      exitCode: 1,
      signal: null,
      durationMs: 19_980,
      attempt: 1,
      logPath: log("plate-1", "segment"),
    }),
    ev(20_010, "gpu.lock.released", "plate-1", null, "cuda:0", {
      gpu: "cuda:0",
      slots: [0],
      exclusive: false,
    }),
    ev(20_020, "gpu.lock.acquired", "plate-3", null, "cuda:0", {
      gpu: "cuda:0",
      slots: [0],
      waitedMs: 19_970,
      exclusive: false,
    }),
    ev(20_030, "gpu.step.skip", "plate-1", "measure", "cuda:0", {
      reason: "needs plate-1/segment, which failed",
      cause: "dependency-failed",
    }),
    ev(21_000, "gpu.step.end", "plate-2", "segment", "cuda:0", {
      status: "oom",
      exitCode: 1,
      signal: null,
      durationMs: 20_960,
      attempt: 1,
      logPath: log("plate-2", "segment"),
    }),
    ev(21_001, "gpu.step.retry", "plate-2", "segment", "cuda:0", { attempt: 2, of: 2, reason: "oom" }),
    ev(21_002, "gpu.step.start", "plate-2", "segment", "cuda:0", {
      attempt: 2,
      logPath: log("plate-2", "segment", 2),
    }),
  ];
}

export function failedSummary(): RunSummary {
  return {
    run: RUN,
    runDir: `.gpuplan/runs/${RUN}`,
    ok: 5,
    failed: 1,
    skipped: 1,
    interrupted: false,
    durationMs: 95_300,
    failures: [
      {
        pipeline: "plate-1",
        step: "segment",
        device: "cuda:0",
        status: "oom",
        exitCode: 1,
        signal: null,
        stderrTail: [
          "Traceback (most recent call last):",
          "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 20.00 GiB",
        ],
        logPath: `.gpuplan/runs/${RUN}/plate-1/segment.log`,
        hint: "lower the step's batch size, or give it more memory (vram:) so fewer pipelines share cuda:0",
      },
    ],
  };
}

/** Colour codes out, trailing spaces off each line: the text a person reads. */
export function plainText(s: string): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: matching ANSI escapes is the point
  const ansi = /\u001b\[[0-9;]*m/g;
  return s
    .replace(ansi, "")
    .split("\n")
    .map((l) => l.trimEnd())
    .join("\n");
}

/** A stand-in for process.stdout/stderr that keeps what is written. */
export function captureStream(columns = 100): NodeJS.WriteStream & { text: () => string } {
  const chunks: string[] = [];
  // Only what the views use: write (with callback), columns, and the event methods ink touches.
  const stream = {
    columns,
    rows: 40,
    isTTY: true,
    write(chunk: string | Uint8Array, ...rest: unknown[]): boolean {
      chunks.push(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      const callback = rest.find((r) => typeof r === "function") as ((e?: Error | null) => void) | undefined;
      if (callback) queueMicrotask(() => callback());
      return true;
    },
    on() {
      return stream;
    },
    off() {
      return stream;
    },
    once() {
      return stream;
    },
    removeListener() {
      return stream;
    },
    addListener() {
      return stream;
    },
    emit() {
      return false;
    },
    listenerCount() {
      return 0;
    },
    text: () => chunks.join(""),
  };
  return stream as unknown as NodeJS.WriteStream & { text: () => string };
}
