/**
 * Memory at a step's start and end (`gpu.memory.snapshot`): emitted when the reading comes and
 * never awaited by the step, so a slow probe does not slow the run; the run waits for readings
 * still in flight before it ends.
 */
import type { PlannedPipeline, PlannedStep } from "../../schema-types/plan.js";
import type { RunEventOf } from "../record/events.js";
import { readSnapshot } from "../record/memory-snapshot.js";
import { visibleGpus } from "../step/step-env.js";
import type { StepContext } from "./contexts.js";

export function snapshotMemory(
  ctx: StepContext,
  pipeline: PlannedPipeline,
  step: PlannedStep,
  device: string,
  onCpu: boolean,
  at: RunEventOf<"gpu.memory.snapshot">["at"],
): void {
  const { sampler } = ctx;
  if (!sampler) return;
  const uuids =
    device === "cpu"
      ? []
      : visibleGpus({ run: ctx.run, pipeline, step, registry: ctx.registry, onCpu }).map((g) => g.uuid);
  ctx.track(
    readSnapshot(sampler, device, uuids).then((gpus) => {
      if (gpus)
        ctx.emit({ event: "gpu.memory.snapshot", pipeline: pipeline.name, step: step.id, device, at, gpus });
    }),
  );
}
