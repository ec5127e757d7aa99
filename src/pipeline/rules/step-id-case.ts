import { warning } from "../../problems/problem.js";
import { logNameKey } from "../../run/record/log-names.js";
import { CASE_INSENSITIVE_SYSTEMS } from "../log-name-case.js";
import type { Rule } from "./rule.js";

/**
 * Step ids that differ only in case (`A` and `a`) name one log file on a case-insensitive file
 * system (log-name-case.ts): a warning at the second, naming the first.
 */
export const stepIdCase: Rule = ({ pipeline, file, report }) => {
  const first = new Map<string, string>();
  const ids = new Set<string>();
  for (const step of pipeline.steps) {
    const key = logNameKey(step.id);
    const earlier = first.get(key);
    // The same id twice is duplicate-step-id, an error of its own.
    if (earlier !== undefined && !ids.has(step.id)) {
      report(
        warning({
          code: "log-name-case",
          message: `step id \`${step.id}\` differs only in case from step \`${earlier}\` of pipeline \`${pipeline.name}\`: on a case-insensitive file system (${CASE_INSENSITIVE_SYSTEMS}) their logs would be one file`,
          hint: "give the steps ids that differ in more than case",
          file,
          pointer: `${step.pointer}/id`,
        }),
      );
    }
    if (earlier === undefined) first.set(key, step.id);
    ids.add(step.id);
  }
};
