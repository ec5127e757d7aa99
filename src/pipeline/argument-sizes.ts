/**
 * Whether a pipeline's steps can be started at all. Linux's execve refuses (E2BIG) a program whose
 * single argument or environment string is longer than MAX_ARG_STRLEN — 32 pages, 131,072 bytes
 * with its NUL — and one whose strings together pass ARG_MAX (a quarter of the stack limit, 2 MiB by
 * default, gpuplan's own environment included). A step's pipeline name and id travel as
 * `GPUPLAN_PIPELINE=<name>` and `GPUPLAN_STEP=<id>`, its run words as arguments (joined into one
 * for `sh -c`), its env as `NAME=value`: a matrix value put into any of them could make a plan that
 * compiles and whose steps each fail to start, after waiting for their GPU. Compile says so at the
 * key instead, once per template and key.
 */
import { error, type Problem, toPointer, warning } from "../problems/problem.js";
import { displayCut } from "../text/safe-text.js";
import type { ResolvedPipeline } from "./model.js";

/** The longest string execve takes, in bytes, without its NUL. */
export const MAX_ARGUMENT_BYTES = 131_071;
/** Half of the default ARG_MAX: what is left is for gpuplan's own environment and the inherited one. */
const LARGE_TOTAL_BYTES = 1 << 20;

/** UTF-8 bytes of `text`, counted only where they could matter: a code unit is at most 3 bytes. */
const bytes = (text: string): number =>
  text.length * 3 <= MAX_ARGUMENT_BYTES ? text.length : Buffer.byteLength(text);

/**
 * Problems with `p`'s steps' arguments and environment; `said` holds the pointers already reported
 * (a template's expansions share them), and is added to. Sizes are added up without building the
 * strings: this runs for every step of every expansion (200,000 in a big compile).
 */
export function argumentSizeProblems(p: ResolvedPipeline, file: string, said: Set<string>): Problem[] {
  const problems: Problem[] = [];
  const name = bytes(p.name);
  for (const step of p.steps) {
    let total = 0;
    const check = (size: number, pointer: () => string) => {
      total += size + 1;
      if (size <= MAX_ARGUMENT_BYTES) return;
      const at = pointer();
      if (said.has(at)) return;
      said.add(at);
      problems.push(
        error({
          code: "argument-too-long",
          message: `step \`${displayCut(step.id)}\` of pipeline \`${displayCut(p.template)}\` would be started with a ${count(size)}-byte argument or environment string, longer than the ${count(MAX_ARGUMENT_BYTES)} bytes Linux passes to a program`,
          hint: "shorten the text (or the matrix value put into it); pass long data in a file instead",
          file,
          pointer: at,
        }),
      );
    };
    check("GPUPLAN_PIPELINE=".length + name, () => `${p.pointer}/name`);
    check("GPUPLAN_STEP=".length + bytes(step.id), () => `${step.pointer}/id`);
    // A worker step starts its worker (the step's own words go to it as a task, through a pipe).
    const argv = step.worker ? step.worker.argv : step.argv;
    const run = () => `${step.pointer}/${step.worker ? "worker/run" : "run"}`;
    if (step.shell && !step.worker)
      check(
        argv.reduce((n, word) => n + bytes(word), Math.max(0, argv.length - 1)),
        run,
      );
    else for (const word of argv) check(bytes(word), run);
    for (const key in step.env)
      check(bytes(key) + 1 + bytes(step.env[key]!), () => `${step.pointer}/env${toPointer([key])}`);
    if (total > LARGE_TOTAL_BYTES && !said.has(`total ${step.pointer}`)) {
      said.add(`total ${step.pointer}`);
      problems.push(
        warning({
          code: "arguments-too-large",
          message: `step \`${displayCut(step.id)}\` of pipeline \`${displayCut(p.template)}\` would be started with ${(total / 2 ** 20).toFixed(1)} MiB of arguments and environment of its own; Linux refuses a program more than a quarter of the stack limit (2 MiB by default) in all, gpuplan's environment included`,
          hint: "pass long data in a file instead",
          file,
          pointer: `${step.pointer}/run`,
        }),
      );
    }
  }
  return problems;
}

const count = (n: number): string => n.toLocaleString("en-US");
