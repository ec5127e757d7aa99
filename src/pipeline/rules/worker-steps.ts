import { error, warning } from "../../problems/problem.js";
import { parseDuration } from "../../units/duration.js";
import { placeholderSpans } from "../expand-matrix.js";
import type { Rule } from "./rule.js";

/** Keys name log and info files and appear in `gpuplan locks`: keep them to path-safe words. */
const KEY_PATTERN = /^[A-Za-z0-9_][A-Za-z0-9_.:@+-]*$/;

/**
 * A worker needs a usable key and a ready timeout,
 * and one key names one process (two commands under one key would serve each other's tasks).
 */
export const workerSteps: Rule = ({ pipeline, spec, file, invalid, report }) => {
  const argvByKey = new Map<string, { argv: string; step: string }>();
  // A matrix the schema rejected is reported already; its variables are not known.
  const vars = invalid(`${pipeline.pointer}/matrix`) ? [] : Object.keys(spec.matrix ?? {});
  spec.steps.forEach((s, j) => {
    const step = pipeline.steps[j]!;
    const worker = step.worker;
    if (!worker || !s.worker) return;
    if (!KEY_PATTERN.test(worker.key)) {
      report(
        error({
          code: "worker-key-format",
          message: `worker key \`${worker.key}\` of step \`${step.id}\` has characters other than letters, digits and _ . : @ + -`,
          // A key is what every expansion's tasks share to reach one warm worker: never substituted.
          hint: /[{}]/.test(worker.key)
            ? "a worker key is not matrix-substituted: one key is shared by every expansion, and so is its warm worker; pass per-expansion values in the task (the step's `run` words, args.matrix)"
            : "use a model name such as `cellpose-cyto3`",
          file,
          pointer: `${step.pointer}/${s.worker.key !== undefined ? "worker/key" : "id"}`,
        }),
      );
    }
    // Like the key, the worker's command is one for every expansion: a matrix variable there
    // would reach the worker as its braces and name. Other braces are the command's own text.
    s.worker.run.forEach((word, k) => {
      for (const { name, index, text } of placeholderSpans(String(word))) {
        if (!vars.includes(name)) continue;
        report(
          error({
            code: "worker-command-placeholder",
            message: `\`{${name}}\` in the worker command of step \`${step.id}\` is not substituted: one worker serves every expansion of pipeline \`${pipeline.name}\``,
            hint: "a worker's `run` is not matrix-substituted; pass per-expansion values in the task: the step's own `run` words (args.argv) and args.matrix",
            file,
            pointer: `${step.pointer}/worker/run/${k}`,
            within: { index, text },
          }),
        );
      }
    });
    if (s.worker.ready_timeout !== undefined && parseDuration(s.worker.ready_timeout) === 0) {
      report(
        error({
          code: "worker-ready-timeout-zero",
          message: `\`ready_timeout\` of step \`${step.id}\` is 0: no worker could ever load`,
          hint: "give the model's load time with room to spare, e.g. `ready_timeout: 2m`",
          file,
          pointer: `${step.pointer}/worker/ready_timeout`,
        }),
      );
    }
    if (step.shell) {
      report(
        warning({
          code: "worker-with-shell",
          message: `step \`${step.id}\` has a worker, which is started without a shell; \`shell\` has no effect`,
          hint: "remove `shell`",
          file,
          pointer: `${step.pointer}/shell`,
        }),
      );
    }
    if (step.exclusive && s.keep_warm !== undefined && step.keepWarm !== false) {
      report(
        warning({
          code: "exclusive-worker-not-warm",
          message: `exclusive step \`${step.id}\` is not kept warm: its worker would hold every slot of the GPU`,
          hint: "remove `keep_warm`, or drop `exclusive` to keep the worker loaded",
          file,
          pointer: `${step.pointer}/keep_warm`,
        }),
      );
    }
    const argv = JSON.stringify(worker.argv);
    const seen = argvByKey.get(worker.key);
    if (seen && seen.argv !== argv) {
      report(
        error({
          code: "worker-key-conflict",
          message: `worker key \`${worker.key}\` names two commands: step \`${seen.step}\` and step \`${step.id}\``,
          hint: "one key is one model process; give the other worker its own `key`",
          file,
          pointer: `${step.pointer}/worker`,
        }),
      );
    } else if (!seen) argvByKey.set(worker.key, { argv, step: step.id });
  });
};
