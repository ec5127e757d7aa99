/** What `--dry-run` shows: per pipeline, its GPUs, and per step the command, cwd and env delta. */
import { resolve } from "node:path";
import { stepOrder } from "../../plan/step-order.js";
import type { GpuplanDryRun } from "../../schema-types/dry-run.js";
import type { GpuplanPlan, PlannedPipeline } from "../../schema-types/plan.js";
import { computeStepEnv } from "../step/step-env.js";

/** schemas/dry-run.schema.json (gpuplan/dry-run@1). */
export type DryRun = GpuplanDryRun;

export function describeDryRun(
  plan: GpuplanPlan,
  pipelines: readonly PlannedPipeline[],
  baseDir: string,
  run: string,
): DryRun {
  return {
    schema: "gpuplan/dry-run@1",
    plan: plan.name,
    run,
    pipelines: pipelines.map((pipeline) => ({
      name: pipeline.name,
      gpus: pipeline.gpus,
      steps: stepOrder(pipeline.steps).map((step) => {
        const { set, unset } = computeStepEnv({ run, pipeline, step, registry: plan.registry });
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
          cwd: resolve(baseDir, step.cwd ?? "."),
          env: { ...set, ...step.env },
          unset,
        };
      }),
    })),
  };
}

const quote = (arg: string): string =>
  /^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", "'\\''")}'`;
