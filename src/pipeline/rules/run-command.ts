import { error } from "../../problems/problem.js";
import type { Rule } from "./rule.js";

/**
 * `run` is an argv array, started without a shell, so quoting can never go wrong; a single
 * string is only meaningful for `shell: true`.
 */
export const runCommand: Rule = ({ pipeline, spec, file, report }) => {
  spec.steps.forEach((s, j) => {
    const step = pipeline.steps[j]!;
    if (typeof s.run === "string" && !step.shell) {
      const words = s.run.trim().split(/\s+/);
      report(
        error({
          code: "run-string-without-shell",
          message: `step \`${step.id}\` gives \`run\` as a string, which needs \`shell: true\``,
          hint: `write it as an argv list, e.g. run: [${words.map((w) => JSON.stringify(w)).join(", ")}], or add \`shell: true\``,
          file,
          pointer: `${step.pointer}/run`,
        }),
      );
    }
    if (Array.isArray(s.run) && step.shell && s.run.length > 1) {
      report(
        error({
          code: "shell-with-argv",
          message: `step \`${step.id}\` has \`shell: true\` but \`run\` is a list of ${s.run.length} words`,
          hint: "with `shell: true` give `run` as one string; or drop `shell` to run the argv directly",
          file,
          pointer: `${step.pointer}/run`,
        }),
      );
    }
  });
};
