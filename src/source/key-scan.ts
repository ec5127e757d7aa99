/**
 * A scan for where a YAML text may use a list, a mapping or an alias as a key when comments may
 * sit between: `{b: 1, # note\n [c]}`, `{*list # note\n }`. A pattern over the text would try again
 * from each comma or `*`, and read each comment to its line's end every time: a line of `, #`
 * repeated would cost its length squared. This follows every start at once, in one pass.
 */

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;

const isBlank = (c: number): boolean => c === SPACE || c === TAB || c === LF || c === CR;
const isBreak = (c: number): boolean => c === LF || c === CR;
/** `,` `[` `]` `{` `}`: they end an anchor, a tag or an alias name. */
const isFlowIndicator = (c: number): boolean =>
  c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d;
const isOpening = (c: number): boolean => c === 0x5b || c === 0x7b;

const OPENER = /[{,]/g;
const ALIAS = /\*/g;

/** Where `pattern` (a one-character class) next matches from `from`, or -1: skips text no scan is in. */
function nextIndex(text: string, pattern: RegExp, from: number): number {
  pattern.lastIndex = from;
  return pattern.exec(text)?.index ?? -1;
}

/**
 * Whether a `[` or `{` starts where a flow mapping's key starts: after a `{` or `,`, past blanks,
 * comments (a `#` after a blank, to the line's end) and properties (`&anchor`, `!tag`). Generous:
 * a comma in a flow sequence or in a quoted string counts too, so a hit only says "look closer".
 */
export function mayHaveFlowCollectionKey(text: string): boolean {
  let separator = false; // past an opener, in blanks and comments
  let comment = false; // in a comment met there
  let property = false; // in an anchor or tag met there
  for (let i = 0; i < text.length; i++) {
    if (!separator && !comment && !property) {
      i = nextIndex(text, OPENER, i);
      if (i === -1) return false;
    }
    const c = text.charCodeAt(i);
    const afterBlank = i > 0 && isBlank(text.charCodeAt(i - 1));
    let nextSeparator = false;
    let nextComment = false;
    let nextProperty = false;
    if (separator) {
      if (isOpening(c)) return true;
      if (isBlank(c)) nextSeparator = true;
      else if (c === 0x23 && afterBlank) nextComment = true;
      else if (c === 0x26 || c === 0x21) nextProperty = true;
    }
    if (comment) {
      if (isBreak(c)) nextSeparator = true;
      else nextComment = true;
    }
    if (property) {
      // `&a[x]`: js-yaml ends the anchor at the bracket and reads the list after it.
      if (isOpening(c)) return true;
      if (isBlank(c)) nextSeparator = true;
      else if (!isFlowIndicator(c)) nextProperty = true;
    }
    // Each `{` or `,` starts a key of its own, one inside a comment or a string too.
    if (c === 0x7b || c === 0x2c) nextSeparator = true;
    separator = nextSeparator;
    comment = nextComment;
    property = nextProperty;
  }
  return false;
}

/**
 * Whether an alias (`*name`, whose anchor may name a collection) is followed by a `:`, `,` or
 * `}`, past blanks and comments: a key, with a value or without one.
 */
export function mayHaveAliasKey(text: string): boolean {
  let start = false; // just past a `*`
  let name = false; // in an alias name
  let separator = false; // past a name, in blanks
  let comment = false; // in a comment met there
  for (let i = 0; i < text.length; i++) {
    if (!start && !name && !separator && !comment) {
      i = nextIndex(text, ALIAS, i);
      if (i === -1) return false;
    }
    const c = text.charCodeAt(i);
    const afterBlank = i > 0 && isBlank(text.charCodeAt(i - 1));
    const ends = c === 0x3a || c === 0x2c || c === 0x7d;
    if ((name || separator) && ends) return true;
    let nextName = false;
    let nextSeparator = false;
    let nextComment = false;
    if ((start || name) && !isBlank(c) && !isFlowIndicator(c)) nextName = true;
    if (name && isBlank(c)) nextSeparator = true;
    if (separator) {
      if (isBlank(c)) nextSeparator = true;
      else if (c === 0x23 && afterBlank) nextComment = true;
    }
    if (comment) {
      if (isBreak(c)) nextSeparator = true;
      else nextComment = true;
    }
    start = c === 0x2a;
    name = nextName;
    separator = nextSeparator;
    comment = nextComment;
  }
  return false;
}
