/**
 * Everything `gpuplan run` settles before it starts anything: the plan (the one a resumed run
 * started with, or the file given, compiled in memory when it is a pipeline), the run's id and
 * directory, the selected pipelines, and the check against the live machine — never run on the
 * wrong card. Problems come back as data for the CLI to print; usage mistakes are thrown.
 */
import { join } from "node:path";
import type { DetectInventory, GpuInfo, Inventory } from "../../inventory/types.js";
import { append } from "../../lists/append.js";
import type { BindMode, GpuBinding } from "../../plan/bind-gpus.js";
import { bindPlan, gpusUsed } from "../../plan/verify-plan.js";
import { UsageError } from "../../problems/errors.js";
import { hasErrors, type Problem } from "../../problems/problem.js";
import type { GpuplanPlan, PlannedPipeline } from "../../schema-types/plan.js";
import type { SbatchCall } from "../../slurm/follow/sbatch-calls.js";
import type { SourceFile } from "../../source/source-file.js";
import { shellWord } from "../../text/shell-word.js";
import { type JournalStart, RUNS_DIR } from "../record/journal.js";
import type { RunLock } from "../record/run-lock.js";
import { makeRunId } from "./run-id.js";
import { selectPipelines } from "./select-pipelines.js";

export interface PrepareRequest {
  /** The plan or pipeline file, as given; none with `resume` (the run folder's plan.json is the plan). */
  file?: string;
  /** `--pipeline` names; none: all (or, resuming, those the run started with). */
  pipelines: readonly string[];
  /** `--resume RUN`. */
  resume?: string;
  detect: DetectInventory;
  /** false: leave the GPUs unchecked (they are a cluster's, checked by each task). Default true. */
  verify?: boolean;
  /**
   * `--bind-slurm-gpus` (a Slurm array task): the pipelines run on the GPUs Slurm allocated,
   * `allocated` being SLURM_STEP_GPUS or SLURM_JOB_GPUS (src/slurm/bind-allocated-gpus.ts).
   */
  bindSlurmGpus?: { allocated: string | undefined };
  /**
   * `--slurm-task JOB_TASK`: an array task of the Slurm run whose folder holds `file` (its
   * plan.json); it records into that folder (src/slurm/task-of-run.ts).
   */
  slurmTask?: string;
  /** `--bind`: `auto` (UUID first, else a matching GPU; the default) or `exact`. */
  bind?: BindMode;
  /** UUIDs of GPUs whose slots are all held by other runs (replacements avoid them). */
  busyGpus?: () => Promise<ReadonlySet<string>>;
}

export interface PreparedRun {
  plan: GpuplanPlan;
  pipelines: PlannedPipeline[];
  /** Directory step `cwd`s are relative to. */
  baseDir: string;
  runId: string;
  runDir: string;
  /** Steps an earlier attempt of this run finished ok (empty for a new run). */
  completed: Set<string>;
  /** The highest attempt number each step has used so far, by stepKey (empty for a new run). */
  attempts: Map<string, number>;
  /**
   * Attempts an earlier session started that may still run: those it never saw end (gpuplan was
   * killed), and those of steps that run again, whose processes may have outlived their end.
   */
  mayStillRun: JournalStart[];
  /** An earlier run's directory, journal and header are there already. */
  resumed: boolean;
  /** A resumed Slurm run's sbatch calls no record accounts for (resume-run.ts). */
  openSbatchCalls?: SbatchCall[];
  /** Each GPU of the plan the selected pipelines use, and the live GPU it runs on. */
  bindings: GpuBinding[];
  /** A resumed run's folder lock, taken before its journal was read (a new run takes its own later). */
  runLock?: RunLock;
  /** A Slurm array task (`JOB_TASK`) of the run in `runDir`: it keeps its own journal and events there. */
  slurmTask?: string;
  /** The plan's text as given, when it is `plan`'s own bytes in the current format: the run folder's copy. */
  planText?: string;
  /**
   * The GPUs as verification read them, and when (performance.now()): the run's memory sampler
   * answers its first readings from them while they are fresh instead of waiting for its child.
   */
  gpuReading?: GpuReading;
}

/** GPUs with their memory and processes, as one detection read them at `at` (performance.now()). */
interface GpuReading {
  gpus: GpuInfo[];
  at: number;
}

export type Preparation =
  /** `warnings`: what compiling the pipeline file or checking the plan against the machine noted. */
  | { ok: true; run: PreparedRun; warnings: Problem[]; sources: SourceFile[] }
  | { ok: false; problems: Problem[]; sources: SourceFile[] };

export async function prepareRun(request: PrepareRequest): Promise<Preparation> {
  const detect = detectOnce(request.detect);
  const detected = detect.read;
  let file = request.file;
  let inventory: Inventory | undefined;
  let recompile: string;
  let recompileHere: string | undefined;
  let run: Omit<PreparedRun, "pipelines" | "bindings">;
  let startedWith: string[] | undefined;
  let givenText: { plan: GpuplanPlan; text: string } | undefined;
  const warnings: Problem[] = [];
  let sources: SourceFile[] = [];
  if (request.resume !== undefined) {
    if (request.slurmTask !== undefined)
      throw new UsageError("--slurm-task and --resume cannot go together", "conflicting-options");
    // Loaded only here: with the run-folder lock and its C library, a new run (a dry run above
    // all) has no use for it.
    const { loadResumedRun } = await import("./resume-run.js");
    const resumed = await loadResumedRun(
      request.resume,
      file === undefined ? undefined : { file, detect, verify: request.verify !== false },
    );
    if ("problems" in resumed) return { ok: false, problems: resumed.problems, sources: resumed.sources };
    const { pipelines, warnings: resumeWarnings, ...rest } = resumed;
    run = { ...rest, resumed: true };
    append(warnings, resumeWarnings);
    startedWith = pipelines;
    file ??= join(resumed.runDir, "plan.json");
    recompile = `gpuplan run ${shellWord(file)} (a new run)`;
  } else {
    if (file === undefined)
      throw new UsageError(
        "gpuplan run needs a plan or pipeline file, or --resume RUN",
        "missing-argument",
        "gpuplan run plan.json, gpuplan run pipeline.yaml, or gpuplan run --resume RUN",
      );
    // Loaded here: it compiles pipeline files, which a resumed run never does.
    const { loadRunInput } = await import("./load-run-input.js");
    // A Slurm task binding its allocated GPUs detects every GPU of the node instead (below).
    const verify = request.verify !== false && request.bindSlurmGpus === undefined;
    const input = await loadRunInput(file, detect, { verify });
    if (hasErrors(input.problems) || !input.plan) {
      return { ok: false, problems: input.problems, sources: input.sources };
    }
    if (input.text !== undefined) givenText = { plan: input.plan, text: input.text };
    inventory = input.inventory;
    recompile = input.recompile;
    recompileHere = input.recompileHere;
    append(warnings, input.problems);
    sources = input.sources;
    if (request.slurmTask !== undefined) {
      const { loadTaskOfRun } = await import("../../slurm/task-of-run.js");
      const task = await loadTaskOfRun(file, request.slurmTask);
      // A task runs the plan.json it was handed: one changed after the run was submitted would run
      // its own steps, and skip those the old plan completed. Unchecked where no digest was kept
      // (an older run's, or an exported array's made where sha256sum was missing): every task would say so.
      if (task.planSha256 !== undefined) {
        const { checkPlanDigest } = await import("../record/plan-digest.js");
        // Only the current format is kept as given (load-run-input.ts): anything else was not written by the run.
        checkPlanDigest(
          file,
          Buffer.from(input.text ?? "", "utf8"),
          task.planSha256,
          task.runId,
          "--slurm-task",
        );
      }
      run = {
        plan: input.plan,
        baseDir: input.baseDir,
        runId: task.runId,
        runDir: task.runDir,
        completed: task.completed,
        attempts: task.attempts,
        mayStillRun: [],
        resumed: false,
        slurmTask: request.slurmTask,
      };
    } else {
      const runId = makeRunId();
      run = {
        plan: input.plan,
        baseDir: input.baseDir,
        runId,
        runDir: join(RUNS_DIR, runId),
        completed: new Set(),
        attempts: new Map(),
        mayStillRun: [],
        resumed: false,
      };
    }
  }
  try {
    if (startedWith && request.pipelines.length > 0)
      checkPartOfRun(request.pipelines, startedWith, run.runId);
    let pipelines = selectPipelines(run.plan, request.pipelines.length ? request.pipelines : startedWith);

    if (request.bindSlurmGpus && gpusUsed(pipelines).length > 0) {
      // Every GPU of the node, whatever CUDA_VISIBLE_DEVICES says: Slurm's indices are node-wide.
      const { bindToAllocatedGpus } = await import("../../slurm/bind-allocated-gpus.js");
      inventory = await detect({ all: true });
      const bound = bindToAllocatedGpus(run.plan, pipelines, inventory, request.bindSlurmGpus.allocated);
      if ("problems" in bound) {
        await run.runLock?.release();
        return { ok: false, problems: bound.problems, sources: [] };
      }
      run = { ...run, plan: bound.plan };
      pipelines = bound.pipelines;
    }

    // Bind to the live machine's GPUs: never run on the wrong card. CPU-only work needs no GPU.
    let bindings: GpuBinding[] = [];
    if (request.verify !== false && gpusUsed(pipelines).length > 0) {
      // Read while the probe child still works: loading the slot lock (koffi, the C library) and
      // reading its files takes ~10 ms that would otherwise follow detection's answer. A failure
      // is still this call's, thrown at the await below; the catch only marks it as awaited.
      const busyNow = request.busyGpus?.();
      busyNow?.catch(() => {});
      inventory ??= await detect();
      const busy = (await busyNow) ?? new Set<string>();
      const bound = bindPlan(run.plan, pipelines, inventory, {
        planFile: file,
        recompile,
        ...(recompileHere && { recompileHere }),
        busy,
        ...(request.bind && { mode: request.bind }),
      });
      if (hasErrors(bound.problems)) {
        await run.runLock?.release();
        return { ok: false, problems: bound.problems, sources: [] };
      }
      append(warnings, bound.problems);
      const names = new Set(pipelines.map((p) => p.name));
      run = { ...run, plan: bound.plan };
      pipelines = bound.plan.pipelines.filter((p) => names.has(p.name));
      bindings = bound.bindings;
    }
    // The file's bytes serve as the run's copy only for the plan they hold (binding may change it).
    const planText = givenText?.plan === run.plan ? givenText.text : undefined;
    const gpuReading = bindings.length > 0 ? detected() : undefined;
    return {
      ok: true,
      run: {
        ...run,
        pipelines,
        bindings,
        ...(planText !== undefined && { planText }),
        ...(gpuReading !== undefined && { gpuReading }),
      },
      warnings,
      sources,
    };
  } catch (e) {
    await run.runLock?.release();
    throw e;
  }
}

/**
 * `--resume RUN --pipeline NAME`: only pipelines the run was started with. Another of the plan's
 * would run under the run's id and be counted as its own, though it was never part of it.
 */
function checkPartOfRun(names: readonly string[], startedWith: readonly string[], run: string): void {
  const outside = names.filter((name) => !startedWith.includes(name));
  if (outside.length === 0) return;
  throw new UsageError(
    `--pipeline: run ${run} was started without ${outside.map((n) => `\`${n}\``).join(", ")}`,
    "unknown-pipeline",
    `its pipelines: ${startedWith.slice(0, 10).join(", ")}${startedWith.length > 10 ? ", …" : ""}; start a new run for the others`,
  );
}

/**
 * The live machine, detected once however often it is asked for (without options): a plan's
 * verification may start detecting early (load-run-input.ts) and collect the answer later.
 */
function detectOnce(detect: DetectInventory): DetectInventory & { read(): GpuReading | undefined } {
  let plain: Promise<Inventory> | undefined;
  let reading: GpuReading | undefined;
  const once: DetectInventory = (options) => {
    if (options !== undefined) return detect(options);
    plain ??= detect().then((inventory) => {
      // Timed when the answer came, not when it is used: a big plan may take seconds to check.
      reading = { gpus: inventory.gpus, at: performance.now() };
      return inventory;
    });
    return plain;
  };
  return Object.assign(once, { read: () => reading });
}
