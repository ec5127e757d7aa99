/**
 * A lone UTF-16 surrogate (`"\ud800"` in YAML or JSON) is half of a character: UTF-8 has no bytes
 * for it, so where Node writes the string out (argv, environment, a path, a file) it becomes U+FFFD
 * and the receiver gets something other than the text said. With the `u` flag a surrogate pair is
 * one code point (above U+FFFF), so the surrogate range matches only the halves that stand alone.
 * A range, not `\p{Cs}`: a Unicode property has V8 ask ICU for its set when the pattern is made,
 * ~0.27 ms of every compile's and run's start (this module loads with the plan checks), against
 * ~0.02 ms for the range.
 */
const LONE = /[\ud800-\udfff]/u;
const LONE_ALL = /[\ud800-\udfff]/gu;

/** The first surrogate in `text` that is not half of a pair, as its escape (`\\ud800`); null when none is. */
export function firstLoneSurrogate(text: string): string | null {
  const found = LONE.exec(text)?.[0];
  return found === undefined ? null : escapeSurrogate(found);
}

/** `text` with each lone surrogate written as its escape (`\ud800`), so a message can show it. */
export function showLoneSurrogates(text: string): string {
  return text.replace(LONE_ALL, escapeSurrogate);
}

const escapeSurrogate = (c: string): string => `\\u${c.charCodeAt(0).toString(16)}`;
