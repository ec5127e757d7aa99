import { error } from "../../problems/problem.js";
import { processTexts } from "./process-texts.js";
import type { Rule } from "./rule.js";

/**
 * A process's arguments, environment and working directory are C strings: they end at the first
 * NUL byte, so `"a\0b"` would silently run as `a`. YAML can write one (`"\0"`), so every text
 * that reaches a process (or a file name: pipeline names name logs) is checked.
 */
export const nulBytes: Rule = ({ spec, pipeline, file, report }) => {
  for (const { value, pointer, what } of processTexts(spec, pipeline, (t) => t.replaceAll("\0", "\\0"))) {
    if (typeof value !== "string" || !value.includes("\0")) continue;
    report(
      error({
        code: "nul-byte",
        message: `${what} holds a NUL byte (\\0), where a command line, an environment or a path would be cut short`,
        hint: "remove the \\0 (in double quotes YAML reads `\\0` as a NUL byte; write `\\\\0` for a backslash and a zero)",
        file,
        pointer,
      }),
    );
  }
};
