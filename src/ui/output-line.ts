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

/** The longest stderr line a run's summary shows whole; the step's log keeps every line. */
const MAX_TAIL_LINE_SHOWN = 2000;

/**
 * A line of a failed step's stderr tail as the summary shows it: the state a terminal would have
 * left it in (after its last CR), and past MAX_TAIL_LINE_SHOWN characters its start and how much
 * was left out. A 60 KB JSON dump on one line came back whole in the summary, one screenful per
 * failure, burying the other failures and the hint. Cut before escaping, so a cut colour sequence
 * is escaped as outside text, never sent half to the terminal.
 */
export function cutTailLine(line: string, max = MAX_TAIL_LINE_SHOWN): string {
  let text = line.endsWith("\r") ? line.slice(0, -1) : line;
  const cr = text.lastIndexOf("\r");
  if (cr >= 0) text = text.slice(cr + 1);
  if (text.length <= max) return text;
  let end = max;
  // Never half a surrogate pair at the cut (it would show as U+FFFD).
  const last = text.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  return `${text.slice(0, end)}… [${(text.length - end).toLocaleString("en-US")} more characters; the log has the whole line]`;
}
