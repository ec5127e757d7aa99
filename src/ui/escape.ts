/**
 * Text from outside gpuplan (vendor-library strings, lock-directory files, pipeline and step
 * names, file contents, a step's output) is shown on terminals; a control character in it could
 * move the cursor, retitle the window, ring the bell or reverse the text that follows. Every such
 * string goes through one of these before it is painted, so none reaches the terminal raw.
 */

// C0 controls, DEL, C1 controls, the bidi embeddings/overrides/isolates and marks, the Unicode
// line and paragraph separators (which some terminals and editors treat as newlines), and the
// zero-width characters (U+200B–U+200D, U+FEFF) that make two different names look the same.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

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

// An SGR colour sequence: ESC [ parameters m. It only colours; it cannot move the cursor.
// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR sequences start with ESC
const SGR = /\u001b\[[0-9;:]*m/g;
const TAB_STOP = 8;

/**
 * A line a step printed, as a terminal would leave it and safe to show: a CRLF's CR dropped, a
 * line redrawn with CR (progress bars) shown as its last state, tabs expanded, the step's colour
 * kept only when `keepColor` (and reset at the end so it cannot leak), anything else escaped.
 */
export function escapeOutputLine(line: string, keepColor: boolean): string {
  let text = line.endsWith("\r") ? line.slice(0, -1) : line;
  const cr = text.lastIndexOf("\r");
  if (cr >= 0) text = text.slice(cr + 1);
  let out = "";
  let column = 0;
  let colored = false;
  let last = 0;
  const plain = (segment: string): void => {
    for (const part of segment.split(/(\t)/)) {
      if (part === "\t") {
        const pad = TAB_STOP - (column % TAB_STOP);
        out += " ".repeat(pad);
        column += pad;
      } else {
        const escaped = escapeText(part);
        out += escaped;
        column += escaped.length;
      }
    }
  };
  for (const m of text.matchAll(SGR)) {
    plain(text.slice(last, m.index));
    if (keepColor) {
      out += m[0];
      colored = true;
    }
    last = m.index + m[0].length;
  }
  plain(text.slice(last));
  return colored ? `${out}\u001b[0m` : out;
}
