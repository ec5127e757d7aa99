import { error } from "../../problems/problem.js";
import { firstLoneSurrogate, showLoneSurrogates } from "../../text/lone-surrogates.js";
import { processTexts } from "./process-texts.js";
import type { Rule } from "./rule.js";

/**
 * A lone surrogate (`"\ud800"`) cannot be passed to a process: Node encodes argv, the environment
 * and paths as UTF-8, which has no bytes for half a character, and puts U+FFFD in its place — the
 * step would silently get other text than the file says. The same texts as NUL bytes are checked.
 */
export const loneSurrogates: Rule = ({ spec, pipeline, file, report }) => {
  for (const { value, pointer, what } of processTexts(spec, pipeline, showLoneSurrogates)) {
    const first = typeof value === "string" ? firstLoneSurrogate(value) : null;
    if (first === null) continue;
    report(
      error({
        code: "lone-surrogate",
        message: `${what} holds a lone UTF-16 surrogate (${first}), half of a character that no command line, environment or path can carry: the process would get U+FFFD (�) in its place`,
        hint: "write the character itself, or both halves of its surrogate pair (`\\ud83d\\ude00` for 😀); write `\\\\ud800` for a backslash and the letters",
        file,
        pointer,
      }),
    );
  }
};
