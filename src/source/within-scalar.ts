/**
 * Where parts of a string value are written in the source: a problem about `{wel}` in
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

/** A part of a string value: where it starts in the parsed string, and its text. */
export interface ValuePart {
  index: number;
  text: string;
}

/**
 * The offset of each part of the string value that starts at `start`, where the source shows the
 * part there as written; else `start`. A line break before it (a folded or multi-line scalar), an
 * escape that spells out the part itself, or a value that is not a scalar written here (an alias,
 * a block scalar) leaves the problem at the scalar's start: a caret at the start says less, but
 * never points at the wrong place. One walk serves all parts of a value, so a string of 40,000
 * unknown placeholders is read once, not once per placeholder.
 */
export function offsetsInScalar(text: string, start: number, parts: readonly ValuePart[]): number[] {
  const found = parts.map(() => start);
  const first = text[start];
  if (first === undefined || NOT_INLINE_SCALAR.has(first)) return found;
  const order = parts.map((_, i) => i).sort((a, b) => parts[a]!.index - parts[b]!.index);
  const quote = text.charCodeAt(start);
  let at = quote === SINGLE || quote === DOUBLE ? start + 1 : start;
  let read = 0;
  for (const i of order) {
    const { index, text: part } = parts[i]!;
    while (read < index) {
      const c = text.charCodeAt(at);
      if (Number.isNaN(c) || c === LF || c === CR) return found;
      if (quote === SINGLE && c === SINGLE) {
        // `''` is one quote; a lone one ends the scalar before the part.
        if (text.charCodeAt(at + 1) !== SINGLE) return found;
        at += 2;
        read++;
      } else if (quote === DOUBLE && c === DOUBLE) {
        return found;
      } else if (quote === DOUBLE && c === BACKSLASH) {
        const kind = text[at + 1];
        if (kind === undefined || kind === "\n" || kind === "\r") return found;
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
    if (read === index && text.startsWith(part, at)) found[i] = at;
  }
  return found;
}
