/**
 * Text from outside gpuplan (vendor-library strings, lock-directory files, Slurm's answers,
 * pipeline and step names, file contents, a step's output) is shown on terminals and written into
 * scripts; a control character in it could move the cursor, retitle the window, ring the bell,
 * reverse the text that follows or end a script's comment line. Every such string goes through one
 * of these, so none reaches a terminal raw. A leaf module: the core (messages it builds from such
 * text) and the presentation layer (what it paints) share it.
 */

// C0 controls, DEL, C1 controls, the bidi embeddings/overrides/isolates and marks, the Unicode
// line and paragraph separators (which some terminals and editors treat as newlines), and the
// zero-width characters (U+200B–U+200D, U+FEFF) that make two different names look the same.
// Then a lone UTF-16 surrogate (half a character, as a YAML or JSON file can spell it: "\ud800"):
// written out as UTF-8 it becomes U+FFFD (�), so the message would show something other than what
// the file says. A low surrogate is matched first and its lookbehind checked after, so that text
// without surrogates pays one character test.
const UNSAFE =
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
  /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]|[\ud800-\udbff](?![\udc00-\udfff])|[\udc00-\udfff](?<![\ud800-\udbff][\udc00-\udfff])/g;

const UNSAFE_ONE = new RegExp(UNSAFE.source);

const NAMED: Readonly<Record<string, string>> = { "\t": "\\t", "\n": "\\n", "\r": "\\r" };

function escapeChar(c: string): string {
  const named = NAMED[c];
  if (named !== undefined) return named;
  const code = c.charCodeAt(0);
  return code <= 0xff
    ? `\\x${code.toString(16).padStart(2, "0")}`
    : `\\u${code.toString(16).padStart(4, "0")}`;
}

/** One line of outside text, safe for a terminal: control characters (newlines too) become `\n`, `\x1b`, `\u202e`… */
export function escapeText(text: string): string {
  return text.replace(UNSAFE, escapeChar);
}

/** Whether escapeText would change `text`. */
export function needsEscape(text: string): boolean {
  return UNSAFE_ONE.test(text);
}

/** Outside text that may span lines: each line escaped as escapeText does, the newlines kept. */
export function escapeLines(text: string): string {
  return text.split("\n").map(escapeText).join("\n");
}

/**
 * Outside text for a web page (the report): as escapeLines, and tabs kept too — an HTML page has
 * no cursor to move, but a bidi override (U+202E) there still reverses what follows it, so that a
 * step named `x\u202egnp.exe` reads "xexe.png", and spills over the text around it.
 */
export function escapeForPage(text: string): string {
  return text.replace(UNSAFE, (c) => (c === "\n" || c === "\t" ? c : escapeChar(c)));
}

/** Outside text cut to `maxLength` characters (… marks the cut), then escaped as escapeText does. */
export function displayText(value: string, maxLength = 200): string {
  if (value.length <= maxLength) return escapeText(value);
  // Never half a surrogate pair before the cut (it would show as an escape of half a character).
  const end = isHighSurrogate(value.charCodeAt(maxLength - 1)) ? maxLength - 1 : maxLength;
  return escapeText(`${value.slice(0, end)}…`);
}

/** A name (plan, pipeline, step) longer than this is shown cut: longer than any a person types or reads. */
export const MAX_NAME_SHOWN = 256;

/**
 * Outside text of more than `max` characters as its first 200 and last 40 around …, then escaped
 * as escapeText does: the end is kept, as the expansions of one template differ there
 * (`…-plate-17`), and a 50 MB plan or pipeline name no longer floods a terminal for each line that
 * names it. Machine output (--json, --ui json) keeps the text whole.
 */
export function displayCut(text: string, max = MAX_NAME_SHOWN): string {
  if (text.length <= max) return escapeText(text);
  let head = 200;
  let tail = text.length - 40;
  // Never half a surrogate pair on either side of the cut (it would show as U+FFFD).
  if (isHighSurrogate(text.charCodeAt(head - 1))) head--;
  if (isLowSurrogate(text.charCodeAt(tail))) tail++;
  return escapeText(`${text.slice(0, head)}…${text.slice(tail)}`);
}

const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;
