import { error } from "../../problems/problem.js";
import type { Rule } from "./rule.js";

/** Step ids name steps in `needs`, logs and the plan, so they must be unique in a pipeline. */
export const uniqueStepIds: Rule = ({ pipeline, file, report }) => {
  const seen = new Map<string, string>();
  for (const step of pipeline.steps) {
    const first = seen.get(step.id);
    if (first !== undefined) {
      report(
        error({
          code: "duplicate-step-id",
          message: `step id \`${step.id}\` is used twice in pipeline \`${pipeline.name}\``,
          hint: "give each step of a pipeline its own id",
          file,
          pointer: `${step.pointer}/id`,
        }),
      );
    } else {
      seen.set(step.id, step.pointer);
    }
  }
};
