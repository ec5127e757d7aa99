import { toPointer } from "../../problems/problem.js";
import type { PipelineSpec } from "../../schema-types/pipeline.js";
import type { ResolvedPipeline } from "../model.js";

/** One text of a template that reaches a process, with where it is written and how to name it. */
interface ProcessText {
  value: unknown;
  pointer: string;
  /** `run[1]` of step `a`, env `E` of the pipeline…: the subject of a message about it. */
  what: string;
}

/**
 * Every text of one pipeline template that a step's process is given: its argv (run, worker.run),
 * environment and working directory, the pipeline's name (GPUPLAN_PIPELINE; it names logs too) and
 * the matrix values put into those. Rules that refuse text a process cannot be given as written
 * (NUL bytes, lone surrogates) check these, so each finds the same places.
 */
export function processTexts(
  spec: PipelineSpec,
  pipeline: ResolvedPipeline,
  show: (text: string) => string,
): ProcessText[] {
  const out: ProcessText[] = [];
  const add = (value: unknown, pointer: string, what: string) => out.push({ value, pointer, what });
  add(spec.name, `${pipeline.pointer}/name`, `the name of pipeline \`${show(spec.name)}\``);
  for (const [key, value] of Object.entries(spec.env ?? {}))
    add(value, `${pipeline.pointer}/env${toPointer([key])}`, `env \`${key}\` of the pipeline`);
  for (const [name, values] of Object.entries(spec.matrix ?? {}))
    for (const [i, v] of values.entries())
      add(v, `${pipeline.pointer}/matrix${toPointer([name, i])}`, `matrix value \`${name}\``);
  spec.steps.forEach((s, j) => {
    const step = pipeline.steps[j]!;
    const of = `of step \`${step.id}\``;
    if (typeof s.run === "string") add(s.run, `${step.pointer}/run`, `\`run\` ${of}`);
    for (const [k, arg] of (Array.isArray(s.run) ? s.run : []).entries())
      add(arg, `${step.pointer}/run/${k}`, `\`run[${k}]\` ${of}`);
    for (const [k, arg] of (s.worker?.run ?? []).entries())
      add(arg, `${step.pointer}/worker/run/${k}`, `\`worker.run[${k}]\` ${of}`);
    // The step's env and cwd merged with the pipeline's and the defaults: point at where each came from.
    // Own keys only: `constructor` or `toString` is a variable name like any other.
    const has = (env: object | undefined, key: string) => env !== undefined && Object.hasOwn(env, key);
    for (const [key, value] of Object.entries(step.env)) {
      const where = has(s.env, key)
        ? `${step.pointer}/env${toPointer([key])}`
        : has(spec.env, key)
          ? undefined // listed above, once for the pipeline
          : `/defaults/env${toPointer([key])}`;
      if (where) add(value, where, `env \`${key}\` ${has(s.env, key) ? of : "of the defaults"}`);
    }
    if (step.cwd !== null)
      add(
        step.cwd,
        s.cwd !== undefined ? `${step.pointer}/cwd` : "/defaults/cwd",
        `\`cwd\` ${s.cwd !== undefined ? of : "of the defaults"}`,
      );
  });
  return out;
}
