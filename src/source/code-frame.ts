/**
 * A pure code frame: the lines around line:column with a caret under the column. A line wider
 * than the frame shows a window around the column, `…` where it is cut: a pipeline written as
 * one 200 KB JSON line must not print 200 KB per problem.
 */
export interface FrameStyle {
  dim: (s: string) => string;
  mark: (s: string) => string;
}

const plain: FrameStyle = { dim: (s) => s, mark: (s) => s };

/** Characters of a line shown around the column when the line is wider. */
const WINDOW = 100;

/** `lines` is the source split once by the caller (splitting per problem is quadratic). */
export function codeFrame(
  lines: readonly string[],
  line: number,
  column: number,
  style: FrameStyle = plain,
  context = 2,
): string {
  const first = Math.max(1, line - context);
  // A file ending in a newline has an empty last "line" that is not worth showing.
  const count = lines.length > 1 && lines[lines.length - 1] === "" ? lines.length - 1 : lines.length;
  const last = Math.max(line, Math.min(count, line + context));
  const width = String(last).length;
  const target = (lines[line - 1] ?? "").replaceAll("\t", "  ");
  const window = windowAround(target, column - 1);
  const out: string[] = [];
  for (let n = first; n <= last; n++) {
    const gutter = `${n === line ? ">" : " "} ${String(n).padStart(width)} |`;
    const content = cut((lines[n - 1] ?? "").replaceAll("\t", "  "), window);
    out.push(
      n === line
        ? `${style.mark(gutter.slice(0, 1))}${style.dim(gutter.slice(1))} ${content}`
        : style.dim(`${gutter} ${content}`),
    );
    if (n === line) {
      const caret = Math.max(0, column - 1 - window.start) + (window.start > 0 ? 1 : 0);
      out.push(`${style.dim(`  ${" ".repeat(width)} |`)} ${" ".repeat(caret)}${style.mark("^")}`);
    }
  }
  return out.join("\n");
}

interface Window {
  start: number;
  end: number;
}

/** The slice of a long line shown around `at` (0-based); the whole line when it fits. */
function windowAround(text: string, at: number): Window {
  if (text.length <= WINDOW) return { start: 0, end: Number.POSITIVE_INFINITY };
  let start = Math.max(0, Math.min(at - WINDOW / 2, text.length - WINDOW));
  // Never start on the second half of a surrogate pair.
  if (start > 0 && isLowSurrogate(text.charCodeAt(start))) start++;
  return { start, end: start + WINDOW };
}

/** A line cut to the window, `…` where something is left out; a line that fits is shown whole. */
function cut(text: string, { start, end }: Window): string {
  if (text.length <= WINDOW || (start === 0 && text.length <= end)) return text;
  let from = Math.min(start, text.length);
  let to = Math.min(end, text.length);
  if (from > 0 && from < text.length && isLowSurrogate(text.charCodeAt(from))) from++;
  if (to < text.length && isLowSurrogate(text.charCodeAt(to))) to--;
  return `${from > 0 ? "…" : ""}${text.slice(from, to)}${to < text.length ? "…" : ""}`;
}

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;
