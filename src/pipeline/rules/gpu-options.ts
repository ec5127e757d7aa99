import { error, warning } from "../../problems/problem.js";
import type { Rule } from "./rule.js";

/** GPU-only settings on a step whose memory types are all host types; a GPU step's `vram` missing or 0. */
export const gpuOptionsOnCpuSteps: Rule = ({ pipeline, spec, file, invalid, report }) => {
  spec.steps.forEach((s, j) => {
    const step = pipeline.steps[j]!;
    if (step.isGpu) {
      // A vram the schema rejected (here or in the defaults) is reported already, not missing.
      const rejected = invalid(`${step.pointer}/vram`) || invalid("/defaults/vram");
      if (step.vramBytes === 0) {
        report(
          error({
            code: "zero-vram",
            message: `GPU step \`${step.id}\` has \`vram: 0\``,
            hint: "give its peak GPU memory (`vram: 8GiB`), or leave `vram` out to assume it fits one slot",
            file,
            pointer: s.vram !== undefined ? `${step.pointer}/vram` : "/defaults/vram",
          }),
        );
      }
      if (s.vram === undefined && step.vramBytes === null && !rejected) {
        report(
          warning({
            code: "missing-vram",
            message: `GPU step \`${step.id}\` has no \`vram\` estimate`,
            hint: "add `vram: 8GiB` (its peak GPU memory) so compile can budget the card; until then it is assumed to fit one slot",
            file,
            pointer: step.pointer,
            at: "key",
          }),
        );
      }
      return;
    }
    // An unknown memory type was reported already and reads as numpy here; whether the step is
    // meant for the GPU is unknown, so "has no effect on a CPU step" would only add noise.
    if (step.unknownMemoryType) return;
    // Likewise when its memory types were rejected by the schema.
    if (invalid(`${step.pointer}/memory`) || invalid(`${step.pointer}/uses`) || invalid("/defaults/memory"))
      return;
    const cpuHint = "its memory types are all host types (numpy); declare a GPU type in `memory` or `uses`";
    if (s.device_map !== undefined) {
      report(
        error({
          code: "device-map-on-cpu-step",
          message: `step \`${step.id}\` has a \`device_map\` but is not a GPU step`,
          hint: cpuHint,
          file,
          pointer: `${step.pointer}/device_map`,
          at: "key",
        }),
      );
    }
    const codes = { vram: "vram-on-cpu-step", exclusive: "exclusive-on-cpu-step" } as const;
    for (const key of ["vram", "exclusive"] as const) {
      if (s[key] !== undefined && s[key] !== false) {
        report(
          warning({
            code: codes[key],
            message: `\`${key}\` has no effect on step \`${step.id}\`, which is not a GPU step`,
            hint: cpuHint,
            file,
            pointer: `${step.pointer}/${key}`,
            at: "key",
          }),
        );
      }
    }
  });
  if (pipeline.gpus > 1 && !pipeline.steps.some((s) => s.isGpu)) {
    report(
      warning({
        code: "gpus-without-gpu-steps",
        message: `pipeline \`${pipeline.name}\` asks for ${pipeline.gpus} GPUs but has no GPU step`,
        file,
        pointer: `${pipeline.pointer}/gpus`,
      }),
    );
  }
};
