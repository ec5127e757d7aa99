/**
 * A pure code frame: the lines around line:column with a caret under the column, control
 * characters escaped (src/text/safe-text.ts) and tabs shown as two spaces. Only the lines shown
 * are looked for, and of each only a window around the column is cut out and escaped, so what a
 * frame costs does not grow with the file: an 80 MB file of NUL bytes, 150 MB of newlines or a
 * pipeline written as one 10 MB JSON line get a frame as small and as quick as any other. A line
 * wider than the frame shows the window, `…` where it is cut.
 */
import { escapeText } from "../text/safe-text.js";
import { firstLineStart } from "./line-positions.js";

export interface FrameStyle {
  dim: (s: string) => string;
  mark: (s: string) => string;
}

const plain: FrameStyle = { dim: (s) => s, mark: (s) => s };

/** Characters of a line shown around the column when the line is wider. */
const WINDOW = 100;

/**
 * How far a neighbouring line's start or end is looked for. A line longer than this is shown
 * cut (its end unknown), and the frame shows no line beyond it on that side.
 */
const SCAN = 1 << 20;

const LF = 0x0a;
const CR = 0x0d;

/** Where a problem is: 1-based line and column (UTF-16 units), and its offset in the text when known. */
export interface FramePoint {
  line: number;
  column: number;
  offset?: number;
}

/** A line's place in the text: its start, and its end when found within SCAN. */
interface Line {
  start: number;
  /** End of the content (before `\n` or `\r\n`); undefined when longer than SCAN. */
  end: number | undefined;
  /** Where the next line starts; undefined when this is the last line or its end is unknown. */
  next: number | undefined;
}

/**
 * One text's lines as code frames need them: found on demand and remembered, so many problems on
 * one long line look for its ends once. One per file being reported.
 */
export class FrameText {
  readonly #lines = new Map<number, Line | null>();
  /** Where line 1 starts: after a byte-order mark, so that the frame shows the line as editors do. */
  readonly #first: number;
  /** The furthest line found by counting from the start, to count on from. */
  #counted: { line: number; start: number };

  constructor(readonly text: string) {
    this.#first = firstLineStart(text);
    this.#counted = { line: 1, start: this.#first };
  }

  /** Line `n`, found from the problem's offset on it, a neighbour already found, or by counting. */
  line(n: number, at?: FramePoint): Line | undefined {
    const known = this.#lines.get(n);
    if (known !== undefined) return known ?? undefined;
    const start = this.#startOf(n, at);
    const line = start === undefined ? undefined : this.#lineAt(start);
    this.#lines.set(n, line ?? null);
    return line;
  }

  #startOf(n: number, at: FramePoint | undefined): number | undefined {
    const { text } = this;
    if (n < 1) return undefined;
    if (at?.offset !== undefined) {
      const start = at.offset - (at.column - 1);
      if (
        start >= this.#first &&
        start <= text.length &&
        (start === this.#first || text.charCodeAt(start - 1) === LF)
      )
        return start;
    }
    const before = this.#lines.get(n - 1);
    if (before) return before.next;
    const after = this.#lines.get(n + 1);
    if (after) {
      if (after.start === this.#first) return undefined;
      // The line before `after` ends at the newline just before it; look back for its start.
      const newline = after.start - 1;
      const from = Math.max(0, newline - SCAN);
      const found = text.slice(from, newline).lastIndexOf("\n");
      if (found !== -1) return from + found + 1;
      return from === 0 ? this.#first : undefined;
    }
    return this.#count(n);
  }

  /** The start of line `n` by counting newlines: only for a problem that came without its offset. */
  #count(n: number): number | undefined {
    const { text } = this;
    let { line, start } = n >= this.#counted.line ? this.#counted : { line: 1, start: this.#first };
    while (line < n) {
      const newline = text.indexOf("\n", start);
      if (newline === -1) return undefined;
      line++;
      start = newline + 1;
    }
    if (line > this.#counted.line) this.#counted = { line, start };
    return start;
  }

  #lineAt(start: number): Line {
    const { text } = this;
    const found = text.slice(start, start + SCAN).indexOf("\n");
    if (found === -1) {
      return start + SCAN >= text.length
        ? { start, end: text.length, next: undefined }
        : { start, end: undefined, next: undefined };
    }
    const newline = start + found;
    const end = newline > start && text.charCodeAt(newline - 1) === CR ? newline - 1 : newline;
    return { start, end, next: newline + 1 };
  }
}

/** What of one line is shown: its escaped window, and whether the line goes on either side of it. */
interface Piece {
  shown: string;
  before: boolean;
  after: boolean;
}

/** A line of the user's file as shown: tabs as two spaces, control characters escaped. */
const show = (raw: string): string => escapeText(raw.replaceAll("\t", "  "));

/** The frame around `at` in `source` (a FrameText, or the text itself for a single frame). */
export function codeFrame(
  source: FrameText | string,
  at: FramePoint,
  style: FrameStyle = plain,
  context = 2,
): string {
  const lines = typeof source === "string" ? new FrameText(source) : source;
  const { text } = lines;
  const target = lines.line(at.line, at);
  const rawColumn = Math.max(0, at.column - 1);
  // Raw characters each side of the column: each is shown as one character or more, so this is
  // enough to fill the window once escaped.
  const anchor = target ? Math.min(rawColumn, lengthOf(target)) : rawColumn;
  const from = Math.max(0, anchor - WINDOW);
  const to = anchor + WINDOW;
  const targetPiece = target ? pieceOf(text, target, from, to) : { shown: "", before: false, after: false };
  // A column past the line's end (at the `\r` or `\n` that ends it) stays past it.
  const caretAt = target
    ? show(text.slice(target.start + from, target.start + Math.min(rawColumn, to, lengthOf(target)))).length +
      Math.max(0, rawColumn - lengthOf(target))
    : rawColumn;
  const whole = !targetPiece.before && !targetPiece.after && targetPiece.shown.length <= WINDOW;
  // Beside a line shown whole, a neighbour shows as much as its raw window holds (up to the
  // column and WINDOW characters more).
  const window = whole ? { start: 0, end: Number.POSITIVE_INFINITY } : windowAround(targetPiece, caretAt);

  const shownLines: { n: number; content: string }[] = [];
  for (let n = at.line - 1; n >= Math.max(1, at.line - context); n--) {
    const line = lines.line(n);
    if (!line) break;
    shownLines.unshift({ n, content: cut(contextPiece(text, line, from, to), window).text });
  }
  const targetIndex = shownLines.length;
  const targetCut = cut(targetPiece, window);
  shownLines.push({ n: at.line, content: targetCut.text });
  for (let n = at.line + 1; n <= at.line + context; n++) {
    const line = lines.line(n);
    // A file ending in a newline has an empty last "line" that is not worth showing.
    if (!line || (line.start === text.length && line.next === undefined)) break;
    shownLines.push({ n, content: cut(contextPiece(text, line, from, to), window).text });
  }

  const width = String(shownLines[shownLines.length - 1]!.n).length;
  const out: string[] = [];
  shownLines.forEach(({ n, content }, i) => {
    const gutter = `${i === targetIndex ? ">" : " "} ${String(n).padStart(width)} |`;
    if (i !== targetIndex) {
      out.push(style.dim(`${gutter} ${content}`));
      return;
    }
    out.push(`${style.mark(gutter.slice(0, 1))}${style.dim(gutter.slice(1))} ${content}`);
    const caret = Math.max(0, caretAt - window.start) + (targetCut.left ? 1 : 0);
    out.push(`${style.dim(`  ${" ".repeat(width)} |`)} ${" ".repeat(caret)}${style.mark("^")}`);
  });
  return out.join("\n");
}

/** Raw characters [from, to) of a line, escaped; whether the line has more on either side. */
function pieceOf(text: string, line: Line, from: number, to: number): Piece {
  const end = line.end ?? Number.POSITIVE_INFINITY;
  // A surrogate pair cut at either edge is left to `cut`, which never shows half of one.
  const a = Math.min(line.start + from, end);
  let b = Math.min(line.start + to, end, text.length);
  // A line whose end is unknown may still end inside the piece.
  let ended = false;
  if (line.end === undefined) {
    const newline = text.slice(a, b).indexOf("\n");
    if (newline !== -1) {
      b = a + newline;
      if (b > a && text.charCodeAt(b - 1) === CR) b--;
      ended = true;
    }
  }
  return {
    shown: show(text.slice(a, b)),
    before: a > line.start,
    after: !ended && b < end && b < text.length,
  };
}

/** A neighbouring line: shown whole when it is short, else cut like the problem's line. */
function contextPiece(text: string, line: Line, from: number, to: number): Piece {
  if (line.end !== undefined && line.end - line.start <= WINDOW)
    return { shown: show(text.slice(line.start, line.end)), before: false, after: false };
  return pieceOf(text, line, from, to);
}

interface Window {
  start: number;
  end: number;
}

/** The part of the problem's shown piece around `at` that the frame shows. */
function windowAround({ shown, before }: Piece, at: number): Window {
  let start = Math.max(0, Math.min(at - WINDOW / 2, shown.length - WINDOW));
  // Never start on the second half of a surrogate pair.
  if ((start > 0 || before) && isLowSurrogate(shown.charCodeAt(start))) start++;
  return { start, end: start + WINDOW };
}

/** A piece cut to the window, `…` where something is left out (`left`: before it); a short whole line is shown whole. */
function cut(piece: Piece, { start, end }: Window): { text: string; left: boolean } {
  const { shown } = piece;
  if (!piece.before && !piece.after && shown.length <= WINDOW) return { text: shown, left: false };
  let from = Math.min(start, shown.length);
  let to = Math.min(end, shown.length);
  if ((from > 0 || piece.before) && from < shown.length && isLowSurrogate(shown.charCodeAt(from))) from++;
  const split =
    to < shown.length
      ? isLowSurrogate(shown.charCodeAt(to))
      : piece.after && isHighSurrogate(shown.charCodeAt(to - 1));
  if (split) to--;
  const left = from > 0 || piece.before;
  const right = to < shown.length || piece.after;
  return { text: `${left ? "…" : ""}${shown.slice(from, to)}${right ? "…" : ""}`, left };
}

/** A line's length, or past any column when its end is unknown. */
const lengthOf = (line: Line): number =>
  line.end === undefined ? Number.POSITIVE_INFINITY : line.end - line.start;

const isLowSurrogate = (code: number): boolean => code >= 0xdc00 && code <= 0xdfff;
const isHighSurrogate = (code: number): boolean => code >= 0xd800 && code <= 0xdbff;
