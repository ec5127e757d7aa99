/**
 * `gpuplan export PLAN --to slurm -o DIR`, as data: the job arrays a plan becomes (one task per
 * pipeline, one array per distinct resource request) and the text of every file to write. Pure:
 * the CLI reads the plan and the node type, and writes the files.
 */
import { error, type Problem, warning } from "../problems/problem.js";
import type { GpuplanPlan } from "../schema-types/plan.js";
import type { ExportedArray } from "../schema-types/slurm-export.js";
import { displayText } from "../text/safe-text.js";
import { sbatchOverrides } from "./command-environment.js";
import { type JobArrayPlan, planJobArrays } from "./job-arrays.js";
import type { NodeShape } from "./node-shape.js";
import {
  jobName,
  renderSbatchScript,
  renderSubmitScript,
  type ScriptContext,
  scriptName,
} from "./render-scripts.js";
import { SBATCH_SAFE } from "./shell-quote.js";
import { type SlurmTaskOptions, untypedModelProblems } from "./task-resources.js";
import { formatSlurmTime } from "./time-limit.js";

export interface SlurmExportOptions extends SlurmTaskOptions {
  partition?: string;
  account?: string;
  qos?: string;
  /** At most this many tasks of each array at once (`--array=…%N`). */
  throttle?: number;
  sbatchArgs: string[];
}

export interface SlurmExportInput {
  plan: GpuplanPlan;
  /** The plan as the user named it. */
  planLabel: string;
  node: NodeShape | null;
  options: SlurmExportOptions;
  /** Absolute paths: where the files go, the plan copy the tasks run, the folder they run in, node, gpuplan. */
  outDir: string;
  planFile: string;
  projectDir: string;
  /** The run's own scripts (`run --executor slurm`): tasks record into the run folder of planFile. */
  taskOfRun?: boolean;
  /** Exported scripts: a token of this export's own (random), so a task never adopts another array's run folder. */
  exportId?: string;
  nodeBinary: string;
  gpuplanBinary: string;
  gpuplanVersion: string;
}

export type { ExportedArray } from "../schema-types/slurm-export.js";

export interface SlurmExport {
  arrays: ExportedArray[];
  /** Relative to outDir. */
  files: { name: string; text: string; executable: boolean }[];
  problems: Problem[];
}

export function exportPlanToSlurm(input: SlurmExportInput): SlurmExport {
  const { plan, node, options } = input;
  const problems: Problem[] = [];
  for (const [what, path] of [
    ["the output folder", input.outDir],
    ["the project folder (the tasks' working folder)", input.projectDir],
  ] as const) {
    if (!SBATCH_SAFE.test(path))
      problems.push(
        error({
          code: "slurm-unsafe-path",
          message: `${what} ${displayText(path, 120)} has characters an #SBATCH line cannot carry (spaces, quotes, %, …)`,
          hint: "export to, and run from, a folder whose path has only letters, digits and _ . / - + : @ , = ~",
        }),
      );
  }
  const arrays = planJobArrays(plan, node, options);
  for (const a of arrays) {
    if (a.request.gres !== null && !SBATCH_SAFE.test(a.request.gres))
      problems.push(
        error({
          code: "slurm-unsafe-value",
          message: `the GRES request ${displayText(a.request.gres, 80)} has characters an #SBATCH line cannot carry`,
          hint: "check --gres-type and the node type inventory's slurm.gres types",
        }),
      );
  }
  problems.push(...untypedModelProblems(plan, node, options.gresTypes), ...planProblems(plan, node));
  const ctx: ScriptContext = {
    planName: plan.name,
    planLabel: input.planLabel,
    gpuplanVersion: input.gpuplanVersion,
    outDir: input.outDir,
    planFile: input.planFile,
    projectDir: input.projectDir,
    taskOfRun: input.taskOfRun ?? false,
    exportId: input.exportId ?? "export",
    node: input.nodeBinary,
    gpuplan: input.gpuplanBinary,
    arrayCount: arrays.length,
    pipelineCount: plan.pipelines.length,
    ...(options.partition !== undefined && { partition: options.partition }),
    ...(options.account !== undefined && { account: options.account }),
    ...(options.qos !== undefined && { qos: options.qos }),
    ...(options.throttle !== undefined && { throttle: options.throttle }),
    sbatchArgs: options.sbatchArgs,
  };
  const scripts = arrays.map(scriptName);
  const texts = arrays.map((a) => renderSbatchScript(a, ctx));
  const unset = [...new Set(texts.flatMap(sbatchOverrides))].sort();
  const files = [
    ...arrays.map((_, i) => ({ name: scripts[i]!, text: texts[i]!, executable: false })),
    { name: "submit.sh", text: renderSubmitScript(scripts, unset, ctx), executable: true },
  ];
  return {
    arrays: arrays.map((a, i) => describe(a, scripts[i]!, plan.name)),
    files,
    problems,
  };
}

function describe(a: JobArrayPlan, script: string, planName: string): ExportedArray {
  return {
    script,
    jobName: jobName(planName, a.index),
    pipelines: a.pipelines,
    gres: a.request.gres,
    sharing: a.request.sharing,
    gpusPerTask: a.request.gpus,
    cpusPerTask: a.request.cpusPerTask,
    memMiB: a.request.memMiB,
    time: formatSlurmTime(a.request.timeMinutes),
    timeMinutes: a.request.timeMinutes,
  };
}

/** What the user should know before submitting: the node type is unknown, MIG, how GPUs are checked. */
function planProblems(plan: GpuplanPlan, node: NodeShape | null): Problem[] {
  const problems: Problem[] = [];
  const gpuPipelines = plan.pipelines.filter((p) => p.gpus.length > 0);
  if (!node) {
    problems.push(
      warning({
        code: "slurm-node-type-unknown",
        message: `the plan was compiled against ${displayText(plan.inventory.label, 120)}, not a node type gpuplan can read: tasks ask for 1 CPU and the cluster's default memory`,
        hint: "pass the node type: --inventory NODE.json (gpuplan detect --slurm --save NODE.json), or --cpus-per-task and --mem",
      }),
    );
  }
  if (gpuPipelines.some((p) => p.gpus.some((g) => g.includes("/mig")))) {
    problems.push(
      warning({
        code: "slurm-mig",
        message: "the plan uses MIG instances; Slurm names MIG GRES types per site",
        hint: "say which type to ask for: --gres-type 'MODEL=TYPE' (gpuplan detect --slurm lists the cluster's types)",
      }),
    );
  }
  return problems;
}
