/**
 * A line a step printed is shown on the terminal as the terminal itself would have left it, with
 * the control characters of outside text escaped (src/text/safe-text.ts).
 */
import { escapeText } from "../text/safe-text.js";

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
