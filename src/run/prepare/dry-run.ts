/**
 * What `--dry-run` shows: per pipeline, its GPUs, and per step the command, cwd and env delta, and
 * whether it could start here (its working folder exists, its program is on its PATH).
 */
import { resolve } from "node:path";
import type { GpuBinding } from "../../plan/bind-gpus.js";
import { stepOrder } from "../../plan/step-order.js";
import type { GpuplanDryRun } from "../../schema-types/dry-run.js";
import type { GpuplanPlan, PlannedPipeline } from "../../schema-types/plan.js";
import { launchProblem } from "../step/spawn/launch-problem.js";
import { computeStepEnv } from "../step/step-env.js";

/** schemas/dry-run.schema.json (gpuplan/dry-run@1). */
export type DryRun = GpuplanDryRun;

export function describeDryRun(
  plan: GpuplanPlan,
  pipelines: readonly PlannedPipeline[],
  baseDir: string,
  run: string,
  /** gpuplan's own PATH, which a step inherits unless its env sets one. */
  inheritedPath: string | undefined,
  bindings: readonly GpuBinding[] = [],
): DryRun {
  return {
    schema: "gpuplan/dry-run@1",
    bindings: bindings.map((b) => ({
      gpu: b.planGpu,
      uuid: b.live.uuid,
      pciBusId: b.live.pciBusId,
      liveGpu: b.live.id,
      planUuid: b.planUuid,
      replaced: b.replaced,
    })),
    plan: plan.name,
    run,
    pipelines: pipelines.map((pipeline) => ({
      name: pipeline.name,
      gpus: pipeline.gpus,
      steps: stepOrder(pipeline.steps).map((step) => {
        const { set, unset } = computeStepEnv({ run, pipeline, step, registry: plan.registry });
        const env = { ...set, ...step.env };
        const cwd = resolve(baseDir, step.cwd ?? ".");
        const program = step.worker ? step.worker.argv[0] : step.shell ? "/bin/sh" : step.argv[0];
        const problem = launchProblem(program, cwd, "PATH" in env ? env.PATH : inheritedPath);
        return {
          id: step.id,
          device: step.device,
          exclusive: step.exclusive,
          needs: step.needs,
          command: step.worker
            ? // A worker step starts (or reuses) its worker and sends it one task.
              `${step.worker.argv.map(quote).join(" ")}  # worker ${step.worker.key}, task args: ${JSON.stringify(step.worker.args)}`
            : step.shell
              ? `/bin/sh -c ${quote(step.argv.join(" "))}`
              : step.argv.map(quote).join(" "),
          cwd,
          env,
          unset,
          problems: problem === null ? [] : [problem],
        };
      }),
    })),
  };
}

const quote = (arg: string): string =>
  /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
