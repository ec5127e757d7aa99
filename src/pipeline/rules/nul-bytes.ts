import { error, toPointer } from "../../problems/problem.js";
import type { Rule } from "./rule.js";

/**
 * A process's arguments, environment and working directory are C strings: they end at the first
 * NUL byte, so `"a\0b"` would silently run as `a`. YAML can write one (`"\0"`), so every text
 * that reaches a process (or a file name: pipeline names name logs) is checked.
 */
export const nulBytes: Rule = ({ spec, pipeline, file, report }) => {
  const check = (value: unknown, pointer: string, what: string) => {
    if (typeof value !== "string" || !value.includes("\0")) return;
    report(
      error({
        code: "nul-byte",
        message: `${what} holds a NUL byte (\\0), where a command line, an environment or a path would be cut short`,
        hint: "remove the \\0 (in double quotes YAML reads `\\0` as a NUL byte; write `\\\\0` for a backslash and a zero)",
        file,
        pointer,
      }),
    );
  };
  check(
    spec.name,
    `${pipeline.pointer}/name`,
    `the name of pipeline \`${spec.name.replaceAll("\0", "\\0")}\``,
  );
  for (const [key, value] of Object.entries(spec.env ?? {}))
    check(value, `${pipeline.pointer}/env${toPointer([key])}`, `env \`${key}\` of the pipeline`);
  for (const [name, values] of Object.entries(spec.matrix ?? {}))
    for (const [i, v] of values.entries())
      check(v, `${pipeline.pointer}/matrix${toPointer([name, i])}`, `matrix value \`${name}\``);
  spec.steps.forEach((s, j) => {
    const step = pipeline.steps[j]!;
    const of = `of step \`${step.id}\``;
    if (typeof s.run === "string") check(s.run, `${step.pointer}/run`, `\`run\` ${of}`);
    for (const [k, arg] of (Array.isArray(s.run) ? s.run : []).entries())
      check(arg, `${step.pointer}/run/${k}`, `\`run[${k}]\` ${of}`);
    for (const [k, arg] of (s.worker?.run ?? []).entries())
      check(arg, `${step.pointer}/worker/run/${k}`, `\`worker.run[${k}]\` ${of}`);
    // The step's env and cwd merged with the pipeline's and the defaults: point at where each came from.
    // Own keys only: `constructor` or `toString` is a variable name like any other.
    const has = (env: object | undefined, key: string) => env !== undefined && Object.hasOwn(env, key);
    for (const [key, value] of Object.entries(step.env)) {
      const where = has(s.env, key)
        ? `${step.pointer}/env${toPointer([key])}`
        : has(spec.env, key)
          ? undefined // checked above, once for the pipeline
          : `/defaults/env${toPointer([key])}`;
      if (where) check(value, where, `env \`${key}\` ${has(s.env, key) ? of : "of the defaults"}`);
    }
    if (step.cwd !== null)
      check(
        step.cwd,
        s.cwd !== undefined ? `${step.pointer}/cwd` : "/defaults/cwd",
        `\`cwd\` ${s.cwd !== undefined ? of : "of the defaults"}`,
      );
  });
};
