import { isDeviceVariable } from "../../inventory/device-variables.js";
import { error, toPointer } from "../../problems/problem.js";
import type { Rule } from "./rule.js";

/**
 * An `env` that sets CUDA_VISIBLE_DEVICES (or an AMD variable) would win over the GPUs gpuplan
 * binds the step to, at run time, on whatever machine runs the plan: a CPU step given `"0"` used
 * GPU 0 outside every slot lock, and a GPU step given `"0,1,2,3"` reached cards other pipelines
 * hold. Indices in such a variable also name other cards on another machine, or after binding.
 */
export const deviceVariables: Rule = ({ spec, pipeline, file, report }) => {
  const refuse = (name: string, pointer: string, of: string) =>
    report(
      error({
        code: "env-sets-devices",
        message: `env \`${name}\` ${of} would choose the step's GPUs, which gpuplan binds and locks itself`,
        hint: "remove it: a step sees the GPUs of its pipeline (`gpus: N` for more than one), a step with only host memory types (numpy) sees none",
        file,
        pointer,
        at: "key",
      }),
    );
  const has = (env: object | undefined, key: string) => env !== undefined && Object.hasOwn(env, key);
  for (const name of Object.keys(spec.env ?? {}))
    if (isDeviceVariable(name))
      refuse(name, `${pipeline.pointer}/env${toPointer([name])}`, "of the pipeline");
  spec.steps.forEach((s, j) => {
    const step = pipeline.steps[j]!;
    // The merged env: point at where each variable came from (the defaults' once, by dedupe).
    for (const name of Object.keys(step.env)) {
      if (!isDeviceVariable(name) || (has(spec.env, name) && !has(s.env, name))) continue;
      if (has(s.env, name)) refuse(name, `${step.pointer}/env${toPointer([name])}`, `of step \`${step.id}\``);
      else refuse(name, `/defaults/env${toPointer([name])}`, "of the defaults");
    }
  });
};
