/**
 * Schema-valid file → resolved templates: defaults applied, sizes in bytes, durations in ms,
 * memory types checked. Matrix expansion happens later (expand.ts) so that a mistake in a
 * template is reported once, not once per plate.
 */
import { pipelineSchema } from "../generated/schema-values.js";
import { didYouMean } from "../problems/did-you-mean.js";
import { error, type Problem, toPointer, warning } from "../problems/problem.js";
import type {
  GpuplanPipelineFile,
  Memory,
  OomRung as PipelineOomRung,
  PipelineSpec,
  StepDefaults,
  StepSpec,
} from "../schema-types/pipeline.js";
import type { OomRung } from "../schema-types/plan.js";
import { planSlurmSettings } from "../slurm/executor-settings.js";
import { parseDuration } from "../units/duration.js";
import { parseSize } from "../units/size.js";
import { durationProblems } from "./duration-limits.js";
import { isGpuType, isMemoryType, MEMORY_TYPES, type MemoryType } from "./memory-types.js";
import {
  type RegistryConfig,
  type ResolvedPipeline,
  type ResolvedStep,
  STRATEGY_FRACTIONS,
} from "./model.js";
import { sizeProblems } from "./size-limits.js";
import { sizeTooLarge } from "./size-too-large.js";

/** Defaults come from the schema (`default` keywords), never restated here. */
const DEFAULTS = pipelineSchema.defaults;
const DEFAULT_ESTIMATE_MS = parseDuration(DEFAULTS.Step.estimate)!;
const DEFAULT_READY_TIMEOUT_MS = parseDuration(DEFAULTS.Worker.ready_timeout)!;

export interface Templates {
  name: string;
  registry: RegistryConfig;
  /** How far matrices may expand the file (`limits`). */
  limits: { maxPipelines: number; maxSteps: number };
  /** One per `pipelines[]` entry, unexpanded: names and argv may still hold {var}. */
  templates: { spec: PipelineSpec; resolved: ResolvedPipeline }[];
}

/** `skip`: indices of pipelines that failed the schema check (left out, other indices kept). */
export function normalizeFile(
  data: GpuplanPipelineFile,
  file: string,
  skip: ReadonlySet<number> = new Set(),
  invalid: (pointer: string) => boolean = () => false,
): { value: Templates; problems: Problem[] } {
  const problems: Problem[] = [...durationProblems(data, file, skip), ...sizeProblems(data, file, skip)];
  const registry = normalizeRegistry(data, file, problems, invalid);
  const defaults = data.defaults ?? {};
  const templates = data.pipelines.flatMap((spec, i) =>
    skip.has(i) ? [] : [{ spec, resolved: normalizePipeline(spec, i, defaults, file, problems) }],
  );
  const limits = {
    maxPipelines: data.limits?.max_pipelines ?? DEFAULTS.Limits.max_pipelines,
    maxSteps: data.limits?.max_steps ?? DEFAULTS.Limits.max_steps,
  };
  return { value: { name: data.name ?? DEFAULTS.root.name, registry, limits, templates }, problems };
}

function normalizeRegistry(
  data: GpuplanPipelineFile,
  file: string,
  problems: Problem[],
  invalid: (pointer: string) => boolean,
): RegistryConfig {
  const r = data.registry ?? {};
  if (r.workers !== undefined) {
    // "worker" is the warm model process; the host's bound on running pipelines got its own name.
    problems.push(
      warning({
        code: "deprecated-key",
        message:
          r.max_parallel_pipelines === undefined
            ? "`registry.workers` is now `registry.max_parallel_pipelines` (read the same way)"
            : "`registry.workers` is now `registry.max_parallel_pipelines`, which is set too: `workers` is ignored",
        hint: "rename the key to `max_parallel_pipelines`",
        file,
        pointer: "/registry/workers",
      }),
    );
  }
  const strategy = r.memory_strategy ?? DEFAULTS.Registry.memory_strategy;
  let fraction: number;
  if (strategy === "custom") {
    // A memory_fraction the schema rejected is reported already; it is not missing.
    if (r.memory_fraction === undefined && !invalid("/registry/memory_fraction")) {
      problems.push(
        error({
          code: "missing-memory-fraction",
          message: "memory_strategy `custom` needs `memory_fraction`",
          hint: "add `memory_fraction: 0.8` (a share of each GPU's memory, 0.1 to 1.0)",
          file,
          pointer: "/registry/memory_strategy",
        }),
      );
    }
    fraction = r.memory_fraction ?? STRATEGY_FRACTIONS[DEFAULTS.Registry.memory_strategy];
  } else {
    // With a rejected strategy, nobody knows whether the fraction was meant for `custom`.
    if (r.memory_fraction !== undefined && !invalid("/registry/memory_strategy")) {
      problems.push(
        error({
          code: "memory-fraction-without-custom",
          message: `memory_fraction is only used with memory_strategy \`custom\`, but the strategy is \`${strategy}\` (${STRATEGY_FRACTIONS[strategy]})`,
          hint: "set `memory_strategy: custom`, or remove `memory_fraction`",
          file,
          pointer: "/registry/memory_fraction",
        }),
      );
    }
    fraction = STRATEGY_FRACTIONS[strategy];
  }
  return {
    memoryStrategy: strategy,
    memoryFraction: fraction,
    maxPipelinesPerGpu: r.max_pipelines_per_gpu ?? null,
    platformPriority: [...(r.platform_priority ?? DEFAULTS.Registry.platform_priority)],
    maxParallelPipelines: r.max_parallel_pipelines ?? r.workers ?? null,
    maxWarmPerGpu: r.max_warm_per_gpu ?? DEFAULTS.Registry.max_warm_per_gpu,
    ...(r.executor && {
      executor: { ...(r.executor.slurm && { slurm: planSlurmSettings(r.executor.slurm) }) },
    }),
    contextReserveBytes: parseSize(r.context_reserve ?? DEFAULTS.Registry.context_reserve) ?? 0,
  };
}

function normalizePipeline(
  spec: PipelineSpec,
  index: number,
  defaults: StepDefaults,
  file: string,
  problems: Problem[],
): ResolvedPipeline {
  const pointer = toPointer(["pipelines", index]);
  const steps = spec.steps.map((step, j) =>
    normalizeStep(
      step,
      j,
      spec.steps[j - 1]?.id,
      `${pointer}${toPointer(["steps", j])}`,
      defaults,
      spec,
      file,
      problems,
    ),
  );
  const req = spec.requires ?? {};
  return {
    name: spec.name,
    template: spec.name,
    pointer,
    matrix: {},
    requires: {
      backend: req.backend ?? null,
      minMemoryBytes: req.min_memory !== undefined ? (parseSize(req.min_memory) ?? null) : null,
      computeCapability: req.compute_capability ?? null,
      namePattern: req.name ?? null,
    },
    gpus: spec.gpus ?? DEFAULTS.Pipeline.gpus,
    allowHostRoundtrip: spec.allow_host_roundtrip ?? DEFAULTS.Pipeline.allow_host_roundtrip,
    steps,
  };
}

function normalizeStep(
  step: StepSpec,
  j: number,
  previousId: string | undefined,
  pointer: string,
  defaults: StepDefaults,
  pipeline: PipelineSpec,
  file: string,
  problems: Problem[],
): ResolvedStep {
  const memorySpec = step.memory ?? defaults.memory;
  const memoryPointer = step.memory !== undefined ? `${pointer}/memory` : "/defaults/memory";
  const before = problems.length;
  const memory = normalizeMemory(
    memorySpec,
    step.uses ?? [],
    memoryPointer,
    `${pointer}/uses`,
    file,
    problems,
  );
  const unknownMemoryType = problems.length > before;
  const shell = step.shell ?? defaults.shell ?? DEFAULTS.Step.shell;
  const own = step.run === undefined ? [] : typeof step.run === "string" ? [step.run] : step.run.map(String);
  const workerArgv = step.worker?.run.map(String) ?? [];
  // A worker step without `run` shows (and plans) its worker's command.
  const argv = step.worker && step.run === undefined ? workerArgv : own;
  const onOom = step.on_oom ?? defaults.on_oom ?? {};
  // Keeping a worker warm is the point of a worker step; a plain step has nothing to keep.
  const keepWarm = step.keep_warm ?? defaults.keep_warm ?? step.worker !== undefined;
  const isGpu = [memory.input, memory.output, ...memory.uses].some(isGpuType);
  // The schema checked the form; a size can still be too large to count in bytes exactly.
  // defaults.vram past the bound is said once, at the defaults (size-limits.ts).
  const size = (v: number | string | undefined, key: string, own = true) => {
    if (v === undefined) return null;
    const bytes = parseSize(v);
    if (bytes === undefined && own) {
      problems.push(
        error({
          ...sizeTooLarge(`\`${key}\` of step \`${step.id}\``, v),
          file,
          pointer: `${pointer}/${key}`,
        }),
      );
    }
    return bytes ?? null;
  };
  const duration = (v: number | string | undefined) => (v === undefined ? null : (parseDuration(v) ?? null));
  return {
    id: step.id,
    pointer,
    argv,
    shell,
    env: stringifyEnv({ ...defaults.env, ...pipeline.env, ...step.env }),
    cwd: step.cwd ?? defaults.cwd ?? null,
    memory,
    isGpu,
    unknownMemoryType,
    vramBytes: size(step.vram ?? (isGpu ? defaults.vram : undefined), "vram", step.vram !== undefined),
    dataBytes: size(step.data, "data"),
    needs: step.needs ?? (j > 0 && previousId !== undefined ? [previousId] : []),
    deviceMap: step.device_map ?? null,
    exclusive: step.exclusive ?? DEFAULTS.Step.exclusive,
    // 0 is no limit, as Slurm's --time=0 and timeout(1) read it (and how a step lifts a default
    // timeout): null, so that every executor reads it alike — Slurm export gave such a step 0 ms.
    timeoutMs: duration(step.timeout ?? defaults.timeout) || null,
    estimateMs: duration(step.estimate ?? defaults.estimate) ?? DEFAULT_ESTIMATE_MS,
    estimateFrom: step.estimate !== undefined ? "step" : defaults.estimate !== undefined ? "defaults" : null,
    onOom: onOom.ladder
      ? oomLadder(onOom.ladder, `${step.on_oom ? pointer : "/defaults"}/on_oom/ladder`, file, problems)
      : { retries: onOom.retries ?? DEFAULTS.OnOom.retries, fallback: onOom.fallback ?? null },
    keepWarm:
      keepWarm === false
        ? false
        : keepWarm === true
          ? { ttlMs: 15 * 60_000 }
          : (duration(keepWarm.ttl) ?? 0) === 0
            ? false
            : { ttlMs: duration(keepWarm.ttl)! },
    worker: step.worker
      ? {
          argv: workerArgv,
          key: step.worker.key ?? step.id,
          readyTimeoutMs: duration(step.worker.ready_timeout) || DEFAULT_READY_TIMEOUT_MS,
          args: step.run === undefined ? [] : own,
        }
      : null,
  };
}

/**
 * Built with fromEntries, not `out[k] =`: assigning `__proto__` on a plain object sets its
 * prototype instead of a key, and a variable named `__proto__` would silently go missing.
 */
function stringifyEnv(env: Record<string, string | number | boolean | undefined>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(env).flatMap(([k, v]) => (v === undefined ? [] : [[k, String(v)]])),
  );
}

function normalizeMemory(
  spec: Memory | undefined,
  uses: string[],
  pointer: string,
  usesPointer: string,
  file: string,
  problems: Problem[],
): { input: MemoryType; output: MemoryType; uses: MemoryType[] } {
  // No memory declared: the step is a plain host process (numpy in, numpy out).
  const raw =
    spec === undefined
      ? { input: "numpy", output: "numpy" }
      : typeof spec === "string"
        ? { input: spec, output: spec }
        : spec;
  const check = (name: string, at: string): MemoryType => {
    if (isMemoryType(name)) return name;
    const suggestion = didYouMean(name, MEMORY_TYPES);
    problems.push(
      error({
        code: "unknown-memory-type",
        message: `unknown memory type \`${name}\``,
        hint: `${suggestion ? `did you mean \`${suggestion}\`? ` : ""}known types: ${MEMORY_TYPES.join(", ")} (case-sensitive)`,
        file,
        pointer: at,
      }),
    );
    return "numpy";
  };
  const shorthand = typeof spec === "string";
  const input = check(raw.input, shorthand || spec === undefined ? pointer : `${pointer}/input`);
  // A shorthand type was already reported once as the input.
  const output = shorthand ? input : check(raw.output, `${pointer}/output`);
  return { input, output, uses: uses.map((u, i) => check(u, `${usesPointer}/${i}`)) };
}

/**
 * An on_oom ladder as the plan carries it: one rung object per attempt; retries counts the GPU
 * rungs and fallback is cpu when the ladder ends on the CPU (what compile and Slurm read). The
 * CPU can only be the last rung: nothing after it would run on a GPU again.
 */
function oomLadder(
  rungs: readonly PipelineOomRung[],
  pointer: string,
  file: string,
  problems: Problem[],
): ResolvedStep["onOom"] {
  const ladder = rungs.map((r): OomRung => {
    if (typeof r === "string") return { kind: r };
    if ("smaller" in r) return { kind: "smaller", scale: r.smaller };
    return { kind: "wait", waitMs: parseDuration(r.wait) ?? 0 };
  }) as [OomRung, ...OomRung[]];
  const cpuAt = ladder.findIndex((r) => r.kind === "cpu");
  if (cpuAt >= 0 && cpuAt < ladder.length - 1) {
    problems.push(
      error({
        code: "oom-ladder-order",
        message: `the on_oom ladder goes on after \`cpu\`: ${ladder
          .slice(cpuAt + 1)
          .map((r) => r.kind)
          .join(", ")} would never run on a GPU`,
        hint: "make `cpu` the last rung",
        file,
        pointer: `${pointer}/${cpuAt}`,
      }),
    );
  }
  return {
    retries: ladder.filter((r) => r.kind !== "cpu").length,
    fallback: ladder.at(-1)?.kind === "cpu" ? "cpu" : null,
    ladder,
  };
}
