/**
 * Where a part of a string value is written in the source: a problem about `{wel}` in
 * `run: ["segment --well {wel}"]` points at the placeholder, not at the string's start.
 */

const LF = 0x0a;
const CR = 0x0d;
const BACKSLASH = 0x5c;
const SINGLE = 0x27;
const DOUBLE = 0x22;

/** Characters a YAML double-quoted escape takes after its backslash, for escapes of one character. */
const HEX_DIGITS: Record<string, number> = { x: 2, u: 4, U: 8 };

/** What starts a node that is not a scalar read character by character (alias, tag, anchor, block scalar, collection). */
const NOT_INLINE_SCALAR = new Set(["*", "&", "!", "|", ">", "[", "{", "]", "}", ",", "#", "%", "@", "`"]);

/**
 * The offset of character `index` of the string value that starts at `start`, when the source
 * shows `part` there as written; else `start`. A line break before it (a folded or multi-line
 * scalar), an escape that spells out the part itself, or a value that is not a scalar written
 * here (an alias, a block scalar) leaves the problem at the scalar's start: a caret at the start
 * says less, but never points at the wrong place.
 */
export function offsetInScalar(text: string, start: number, index: number, part: string): number {
  const first = text[start];
  if (first === undefined || NOT_INLINE_SCALAR.has(first)) return start;
  let at = start;
  let read = 0;
  const quote = text.charCodeAt(start);
  if (quote === SINGLE || quote === DOUBLE) at++;
  while (read < index) {
    const c = text.charCodeAt(at);
    if (Number.isNaN(c) || c === LF || c === CR) return start;
    if (quote === SINGLE && c === SINGLE) {
      // `''` is one quote; a lone one ends the scalar before the part.
      if (text.charCodeAt(at + 1) !== SINGLE) return start;
      at += 2;
      read++;
    } else if (quote === DOUBLE && c === DOUBLE) {
      return start;
    } else if (quote === DOUBLE && c === BACKSLASH) {
      const kind = text[at + 1];
      if (kind === undefined || kind === "\n" || kind === "\r") return start;
      const digits = HEX_DIGITS[kind];
      if (digits === undefined) {
        at += 2;
        read++;
      } else {
        const code = Number.parseInt(text.slice(at + 2, at + 2 + digits), 16);
        at += 2 + digits;
        read += code > 0xffff ? 2 : 1;
      }
    } else {
      at++;
      read++;
    }
  }
  return read === index && text.startsWith(part, at) ? at : start;
}
