/**
 * Finds where JSON pointers point in YAML text in one streaming pass over the characters, without
 * building a document: what locating problems costs must stay small next to a clean compile, and
 * the `yaml` package's document (or even its CST) of a 30 MB file takes tens of seconds and
 * gigabytes (docs/decisions/0005-locating-problems.md).
 *
 * The answers are exactly those `document-offsets.ts` reads from a `yaml` document (node range
 * starts, an empty value placed after its indicator and spaces, a missing key answered by its
 * parent). This scanner knows the YAML people write — block and flow collections, plain, quoted
 * and block scalars, comments, anchors, tags and aliases in block context — and throws
 * `Unsupported` on anything rarer (explicit `?` keys, collections as keys, directives, tabs in
 * indentation, escapes in quoted keys, …); the caller then asks the document instead. Only text
 * js-yaml has already accepted reaches here.
 */

export interface OffsetRequest {
  pointer: string;
  at: "key" | "value";
}

export class Unsupported extends Error {}
/** Every request is answered: stop scanning. */
class Done extends Error {}

interface Trie {
  children: Map<string, Trie>;
  /** Requests whose pointer ends at this node. */
  ends: OffsetRequest[];
}

const newTrie = (): Trie => ({ children: new Map(), ends: [] });

const SPACE = 0x20;
const TAB = 0x09;
const LF = 0x0a;
const CR = 0x0d;
const HASH = 0x23;
const COLON = 0x3a;
const DASH = 0x2d;

/** Plain keys that the YAML 1.2 core schema reads as something other than their own text. */
const CORE_WORDS = new Map([
  ["null", "null"],
  ["Null", "null"],
  ["NULL", "null"],
  ["true", "true"],
  ["True", "true"],
  ["TRUE", "true"],
  ["false", "false"],
  ["False", "false"],
  ["FALSE", "false"],
]);

/** The key a plain scalar names, as `String(value)` of the core schema would give it. */
function plainKey(raw: string): string {
  const first = raw.charCodeAt(0);
  const letter = (first >= 0x41 && first <= 0x5a) || (first >= 0x61 && first <= 0x7a) || first === 0x5f;
  if (!letter) throw new Unsupported("plain key that may be a number or null");
  return CORE_WORDS.get(raw) ?? raw;
}

/** The offset each request points at, keyed by the request. Throws Unsupported. */
export function scanOffsets(text: string, requests: readonly OffsetRequest[]): Map<OffsetRequest, number> {
  const root = newTrie();
  let pending = 0;
  for (const r of requests) {
    let node = root;
    for (const seg of splitPointer(r.pointer)) {
      let next = node.children.get(seg);
      if (!next) {
        next = newTrie();
        node.children.set(seg, next);
      }
      node = next;
    }
    node.ends.push(r);
    pending++;
  }
  const found = new Map<OffsetRequest, number>();
  const answer = (r: OffsetRequest, offset: number) => {
    if (found.has(r)) return;
    found.set(r, offset);
    if (--pending === 0) throw new Done();
  };
  const scanner = new Scanner(text, answer);
  try {
    scanner.document(root);
  } catch (e) {
    if (!(e instanceof Done)) throw e;
  }
  return found;
}

function splitPointer(pointer: string): string[] {
  if (pointer === "") return [];
  const segments = pointer.slice(1).split("/");
  // Most pointers have nothing escaped: no pass over their segments.
  return pointer.includes("~")
    ? segments.map((s) => s.replaceAll("~1", "/").replaceAll("~0", "~"))
    : segments;
}

/** Flow collections deeper than this are left to the document (which refuses them as too deep). */
const MAX_FLOW_DEPTH = 1000;

class Scanner {
  private p = 0;
  private flowDepth = 0;
  private readonly n: number;
  private readonly bom: boolean;

  constructor(
    private readonly t: string,
    private readonly answer: (r: OffsetRequest, offset: number) => void,
  ) {
    this.n = t.length;
    this.bom = t.charCodeAt(0) === 0xfeff;
  }

  // ---- answering -------------------------------------------------------------------------

  /** Every request in the subtree: at-key ones get `keyAt`, the rest `valueAt`. */
  private answerAll(trie: Trie | undefined, keyAt: number, valueAt: number): void {
    if (!trie) return;
    for (const r of trie.ends) this.answer(r, r.at === "key" ? keyAt : valueAt);
    for (const child of trie.children.values()) this.answerAll(child, keyAt, valueAt);
  }

  /** Requests ending at a node that starts at `start`, reached through a key at `keyAt`. */
  private answerEnds(trie: Trie | undefined, keyAt: number | undefined, start: number): void {
    if (!trie) return;
    for (const r of trie.ends) this.answer(r, r.at === "key" && keyAt !== undefined ? keyAt : start);
  }

  /** A leaf (scalar, alias, empty value): a path going deeper stops at its start. */
  private leaf(trie: Trie | undefined, keyAt: number | undefined, start: number): void {
    if (!trie) return;
    this.answerEnds(trie, keyAt, start);
    for (const child of trie.children.values()) this.answerAll(child, start, start);
  }

  // ---- characters ------------------------------------------------------------------------

  private ch(at = this.p): number {
    return at < this.n ? this.t.charCodeAt(at) : -1;
  }

  /** Space, tab, line break or end of text: what must follow `-`, `:` and `?` indicators. */
  private blankAt(at: number): boolean {
    const c = this.ch(at);
    return c === SPACE || c === TAB || c === LF || c === CR || c === -1;
  }

  private lineStartOf(at: number): number {
    const start = this.t.lastIndexOf("\n", at - 1) + 1;
    return start === 0 && this.bom ? 1 : start;
  }

  /** Column of the current position; tabs before it on its line are not handled here. */
  private column(): number {
    const start = this.lineStartOf(this.p);
    for (let i = start; i < this.p; i++) if (this.t.charCodeAt(i) === TAB) throw new Unsupported("tab");
    return this.p - start;
  }

  private skipInlineSpace(): void {
    let c = this.ch();
    while (c === SPACE || c === TAB) c = this.ch(++this.p);
  }

  /** At a line break, a comment or the end (after inline space has been skipped). */
  private atLineEnd(): boolean {
    const c = this.ch();
    return c === LF || c === CR || c === -1 || c === HASH;
  }

  private skipLineBreak(): void {
    const c = this.ch();
    if (c === CR) {
      if (this.ch(this.p + 1) !== LF) throw new Unsupported("lone carriage return");
      this.p += 2;
    } else if (c === LF) {
      this.p++;
    }
  }

  private skipToLineEnd(): void {
    const nl = this.t.indexOf("\n", this.p);
    this.p = nl === -1 ? this.n : this.t.charCodeAt(nl - 1) === CR ? nl - 1 : nl;
  }

  /** Past spaces, comments and line breaks to the next content character (or the end). */
  private skipToContent(): void {
    for (;;) {
      this.skipInlineSpace();
      const c = this.ch();
      if (c === HASH) this.skipToLineEnd();
      else if (c === LF || c === CR) this.skipLineBreak();
      else return;
    }
  }

  /** In flow context the same, but a `#` only starts a comment after a blank (as in block). */
  private skipFlowSpace(): void {
    this.skipToContent();
  }

  // ---- document --------------------------------------------------------------------------

  document(root: Trie): void {
    if (this.bom) this.p = 1;
    this.skipToContent();
    if (this.p < this.n && this.column() === 0) {
      if (this.t.charCodeAt(this.p) === 0x25 /* % */) throw new Unsupported("directive");
      if (this.t.startsWith("---", this.p) && this.blankAt(this.p + 3)) {
        this.p += 3;
        this.skipInlineSpace();
        if (!this.atLineEnd()) throw new Unsupported("content on the --- line");
        this.skipToContent();
        if (this.p >= this.n) throw new Unsupported("empty document after ---");
      }
    }
    if (this.p >= this.n) {
      this.answerAll(root, 0, 0);
      return;
    }
    this.blockNode(this.column(), root, undefined, -1, false);
    if (this.p < this.n) throw new Unsupported("more after the document");
  }

  // ---- block context ---------------------------------------------------------------------

  /**
   * The value after a `key:` (kind "map", indicator column = the key's) or a `- ` (kind "seq"):
   * inline on this line, on the lines below, or empty. Leaves the position at the next content.
   */
  private valueAfter(indicatorColumn: number, kind: "map" | "seq", trie: Trie | undefined, keyAt?: number) {
    this.skipInlineSpace();
    const emptyAt = this.p;
    if (!this.atLineEnd()) {
      this.blockNode(this.column(), trie, keyAt, indicatorColumn, kind === "map");
      return;
    }
    this.skipToContent();
    if (this.p < this.n) {
      const c = this.column();
      const compactSeq =
        kind === "map" && c === indicatorColumn && this.ch() === DASH && this.blankAt(this.p + 1);
      if (c > indicatorColumn || compactSeq) {
        this.blockNode(c, trie, keyAt, indicatorColumn, false);
        return;
      }
    }
    this.leaf(trie, keyAt, emptyAt);
  }

  /**
   * A node whose first character is at the current position, column `c`. `parentIndent`: lines
   * of this node must be indented more (block scalars, plain continuation lines). `inline`: it
   * follows a key on the same line, so it cannot be a block collection.
   */
  private blockNode(
    c: number,
    trie: Trie | undefined,
    keyAt: number | undefined,
    parentIndent: number,
    inline: boolean,
  ): void {
    const start = this.p;
    const ch = this.ch();
    if (ch === DASH && this.blankAt(this.p + 1)) {
      if (inline) throw new Unsupported("sequence after a key on one line");
      if (c === 0 && this.t.startsWith("---", this.p)) throw new Unsupported("document marker");
      this.blockSeq(c, trie, keyAt);
      return;
    }
    if (
      c === 0 &&
      (this.t.startsWith("---", this.p) || this.t.startsWith("...", this.p)) &&
      this.blankAt(this.p + 3)
    )
      throw new Unsupported("document marker");
    if (ch === 0x26 /* & */ || ch === 0x21 /* ! */) {
      this.props(parentIndent, trie, keyAt, inline);
      return;
    }
    if (ch === 0x2a /* * */) {
      this.skipAnchorName();
      this.skipInlineSpace();
      if (this.ch() === COLON) throw new Unsupported("alias as a key");
      this.leaf(trie, keyAt, start);
      this.endOfLine();
      return;
    }
    if (ch === 0x5b /* [ */ || ch === 0x7b /* { */) {
      this.flowNode(trie, keyAt);
      this.skipInlineSpace();
      if (this.ch() === COLON) throw new Unsupported("collection as a key");
      this.endOfLine();
      return;
    }
    if (ch === 0x7c /* | */ || ch === 0x3e /* > */) {
      this.leaf(trie, keyAt, start);
      this.blockScalar(parentIndent);
      return;
    }
    if (ch === 0x22 /* " */ || ch === 0x27 /* ' */) {
      this.quoted();
      this.skipInlineSpace();
      if (this.ch() === COLON && this.blankAt(this.p + 1)) {
        if (inline) throw new Unsupported("key after a key on one line");
        this.p = start;
        this.blockMap(c, trie, keyAt);
        return;
      }
      this.leaf(trie, keyAt, start);
      this.endOfLine();
      return;
    }
    if ((ch === 0x3f /* ? */ || ch === COLON) && this.blankAt(this.p + 1))
      throw new Unsupported("explicit key");
    if (ch === 0x25 /* % */ || ch === 0x40 /* @ */ || ch === 0x60 /* ` */) throw new Unsupported("reserved");
    // A plain scalar, or the first key of a block mapping.
    const end = this.plainLineEnd();
    if (end.isKey) {
      if (inline) throw new Unsupported("key after a key on one line");
      this.blockMap(c, trie, keyAt);
      return;
    }
    this.leaf(trie, keyAt, start);
    this.p = end.at;
    if (end.comment) this.endOfLine();
    else this.plainContinuation(parentIndent);
  }

  /** Anchors and tags before a node; the node is on this line or the ones below. */
  private props(
    parentIndent: number,
    trie: Trie | undefined,
    keyAt: number | undefined,
    inline: boolean,
  ): void {
    for (;;) {
      const c = this.ch();
      if (c === 0x26) this.skipAnchorName();
      else if (c === 0x21) this.skipTag();
      else break;
      this.skipInlineSpace();
    }
    const emptyAt = this.p;
    if (!this.atLineEnd()) {
      const c = this.ch();
      // Props before a key on the same line belong to the key, not to the mapping.
      if (c === 0x26 || c === 0x21 || c === 0x2a) throw new Unsupported("props then alias");
      const save = this.p;
      if (c !== 0x22 && c !== 0x27 && c !== 0x5b && c !== 0x7b && c !== 0x7c && c !== 0x3e) {
        if (c === DASH && this.blankAt(this.p + 1)) throw new Unsupported("props before a sequence entry");
        if (this.plainLineEnd().isKey) throw new Unsupported("props on a key");
        this.p = save;
      }
      this.blockNode(this.column(), trie, keyAt, parentIndent, true);
      return;
    }
    this.skipToContent();
    if (this.p < this.n) {
      const c = this.column();
      if (c > parentIndent) {
        this.blockNode(c, trie, keyAt, parentIndent, false);
        return;
      }
      if (!inline && c === parentIndent && this.ch() === DASH && this.blankAt(this.p + 1))
        throw new Unsupported("props before a compact sequence");
    }
    this.leaf(trie, keyAt, emptyAt);
  }

  private skipAnchorName(): void {
    this.p++;
    for (;;) {
      const c = this.ch();
      if (c === -1 || c === SPACE || c === TAB || c === LF || c === CR) break;
      if (c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) break;
      this.p++;
    }
  }

  private skipTag(): void {
    if (this.ch(this.p + 1) === 0x3c /* !< */) throw new Unsupported("verbatim tag");
    for (;;) {
      const c = this.ch();
      if (c === -1 || c === SPACE || c === TAB || c === LF || c === CR) break;
      if (c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) throw new Unsupported("tag");
      this.p++;
    }
  }

  /** After an inline node: only a comment may follow on the line. */
  private endOfLine(): void {
    this.skipInlineSpace();
    if (!this.atLineEnd()) throw new Unsupported("more on the line");
    this.skipToContent();
  }

  /**
   * Where a plain scalar on this line ends: at a `: ` (it is a key), at ` #` (a comment), or at the
   * line break.
   */
  private plainLineEnd(): { at: number; isKey: boolean; comment: boolean } {
    const t = this.t;
    let i = this.p;
    let lastContent = i;
    for (; i < this.n; i++) {
      const c = t.charCodeAt(i);
      if (c === LF || c === CR) break;
      if (c === COLON && this.blankAt(i + 1)) return { at: i, isKey: true, comment: false };
      if (c === HASH && i > this.p) {
        const before = t.charCodeAt(i - 1);
        if (before === SPACE || before === TAB) return { at: lastContent, isKey: false, comment: true };
      }
      if (c !== SPACE && c !== TAB) lastContent = i + 1;
    }
    return { at: lastContent, isKey: false, comment: false };
  }

  /** Lines more indented than the parent continue a plain scalar, until a comment line. */
  private plainContinuation(parentIndent: number): void {
    for (;;) {
      this.skipInlineSpace();
      if (this.atLineEnd() && this.ch() === HASH) {
        this.skipToContent();
        return;
      }
      if (this.ch() === -1) return;
      if (this.ch() !== LF && this.ch() !== CR) throw new Unsupported("more after a plain scalar");
      const lineEnd = this.p;
      this.skipLineBreak();
      // Blank lines fold into the scalar; find the next line with content.
      let q = this.p;
      for (;;) {
        let indent = 0;
        while (this.ch(q) === SPACE) {
          q++;
          indent++;
        }
        const c = this.ch(q);
        if (c === TAB) throw new Unsupported("tab");
        if (c === LF || c === CR) {
          q += c === CR && this.ch(q + 1) === LF ? 2 : 1;
          continue;
        }
        if (c === -1 || c === HASH || indent <= parentIndent) {
          this.p = lineEnd;
          this.skipToContent();
          return;
        }
        break;
      }
      this.p = q;
      this.skipToLineEnd();
    }
  }

  private blockMap(c: number, trie: Trie | undefined, keyAt: number | undefined): void {
    const start = this.p;
    this.answerEnds(trie, keyAt, start);
    const seen = trie && trie.children.size > 0 ? new Set<string>() : undefined;
    for (;;) {
      const at = this.p;
      const k = this.blockKey();
      let child: Trie | undefined;
      if (seen && !seen.has(k)) {
        seen.add(k);
        child = trie!.children.get(k);
      }
      this.valueAfter(c, "map", child, at);
      if (this.p >= this.n) break;
      const next = this.column();
      if (next < c) break;
      if (next > c || (this.ch() === DASH && this.blankAt(this.p + 1))) {
        throw new Unsupported("unexpected indentation in a mapping");
      }
    }
    if (trie && seen) {
      for (const [seg, child] of trie.children)
        if (!seen.has(seg)) this.answerAll(child, keyAt ?? start, start);
    }
  }

  /** A key in block context (plain or quoted, on one line); leaves the position after `:`. */
  private blockKey(): string {
    const c = this.ch();
    let k: string;
    if (c === 0x22 || c === 0x27) {
      k = this.quotedKey();
      this.skipInlineSpace();
    } else {
      if (
        c === 0x26 ||
        c === 0x21 ||
        c === 0x2a ||
        c === 0x5b ||
        c === 0x7b ||
        c === 0x3f ||
        c === 0x7c ||
        c === 0x3e
      )
        throw new Unsupported("key with props or a complex key");
      const end = this.plainLineEnd();
      if (!end.isKey) throw new Unsupported("mapping line without a key");
      k = plainKey(this.t.slice(this.p, end.at).trimEnd());
      this.p = end.at;
    }
    if (this.ch() !== COLON || !this.blankAt(this.p + 1)) throw new Unsupported("key without `:`");
    this.p++;
    return k;
  }

  private blockSeq(c: number, trie: Trie | undefined, keyAt: number | undefined): void {
    const start = this.p;
    this.answerEnds(trie, keyAt, start);
    const items = trie ? indexChildren(trie) : undefined;
    let i = 0;
    for (; ; i++) {
      this.p++; // past `-`
      this.valueAfter(c, "seq", items?.get(i));
      if (this.p >= this.n) break;
      const next = this.column();
      if (next < c) break;
      if (next === c && !(this.ch() === DASH && this.blankAt(this.p + 1))) break;
      if (next > c) throw new Unsupported("unexpected indentation in a sequence");
    }
    if (items) {
      for (const [index, child] of items) if (index > i) this.answerAll(child, start, start);
      for (const child of items.invalid) this.answerAll(child, start, start);
    }
  }

  /** `|` or `>` and its header; content lines are the following ones indented past the parent. */
  private blockScalar(parentIndent: number): void {
    this.p++;
    for (;;) {
      const c = this.ch();
      if (c === 0x2b || c === DASH) this.p++;
      else if (c >= 0x30 && c <= 0x39) throw new Unsupported("explicit indentation indicator");
      else break;
    }
    this.skipInlineSpace();
    if (!this.atLineEnd()) throw new Unsupported("content after a block scalar header");
    this.skipToLineEnd();
    let contentIndent = -1;
    for (;;) {
      if (this.p >= this.n) return;
      const lineEnd = this.p;
      this.skipLineBreak();
      let q = this.p;
      let indent = 0;
      while (this.ch(q) === SPACE) {
        q++;
        indent++;
      }
      const c = this.ch(q);
      if (c === LF || c === CR || c === -1 || (c === TAB && this.onlySpaceToLineEnd(q))) {
        this.p = q;
        if (c === TAB) this.skipToLineEnd();
        if (c === -1) return;
        continue;
      }
      if (contentIndent === -1 && indent > parentIndent) contentIndent = indent;
      if (contentIndent !== -1 && indent >= contentIndent) {
        this.p = q;
        this.skipToLineEnd();
        continue;
      }
      if (indent > parentIndent) throw new Unsupported("less indented block scalar line");
      this.p = lineEnd;
      this.skipToContent();
      return;
    }
  }

  private onlySpaceToLineEnd(q: number): boolean {
    for (let i = q; i < this.n; i++) {
      const c = this.t.charCodeAt(i);
      if (c === LF || c === CR) return true;
      if (c !== SPACE && c !== TAB) return false;
    }
    return true;
  }

  // ---- scalars ---------------------------------------------------------------------------

  /** Past a quoted scalar (either quote), which may span lines. */
  private quoted(): void {
    const t = this.t;
    const q = t.charCodeAt(this.p);
    let i = this.p + 1;
    if (q === 0x22) {
      for (;;) {
        if (i >= this.n) throw new Unsupported("unterminated string");
        const c = t.charCodeAt(i);
        if (c === 0x5c) i += 2;
        else if (c === 0x22) {
          i++;
          break;
        } else i++;
      }
    } else {
      for (;;) {
        const j = t.indexOf("'", i);
        if (j === -1) throw new Unsupported("unterminated string");
        if (t.charCodeAt(j + 1) === 0x27) i = j + 2;
        else {
          i = j + 1;
          break;
        }
      }
    }
    this.p = i;
  }

  /** A quoted key's text; escapes and line breaks are left to the document. */
  private quotedKey(): string {
    const start = this.p;
    this.quoted();
    const inner = this.t.slice(start + 1, this.p - 1);
    if (inner.includes("\n") || inner.includes("\r")) throw new Unsupported("multi-line key");
    if (this.t.charCodeAt(start) === 0x22) {
      if (inner.includes("\\")) throw new Unsupported("escape in a key");
      return inner;
    }
    return inner.replaceAll("''", "'");
  }

  // ---- flow context ----------------------------------------------------------------------

  /**
   * A node inside (or starting) a flow collection. The scan recurses once per level: a JSON plan
   * nested 100,000 deep (which JSON.parse reads) overflowed the stack here and ended `run` with
   * an internal error; past MAX_FLOW_DEPTH the document is asked instead.
   */
  private flowNode(trie: Trie | undefined, keyAt: number | undefined): void {
    if (this.flowDepth >= MAX_FLOW_DEPTH) throw new Unsupported("flow collections nested too deep");
    this.flowDepth++;
    try {
      this.flowNodeAt(trie, keyAt);
    } finally {
      this.flowDepth--;
    }
  }

  private flowNodeAt(trie: Trie | undefined, keyAt: number | undefined): void {
    const start = this.p;
    const c = this.ch();
    if (c === 0x5b) this.flowSeq(trie, keyAt);
    else if (c === 0x7b) this.flowMap(trie, keyAt);
    else if (c === 0x22 || c === 0x27) {
      this.quoted();
      this.leaf(trie, keyAt, start);
    } else if (c === 0x2a) {
      this.skipAnchorName();
      this.leaf(trie, keyAt, start);
    } else if (c === 0x26 || c === 0x21) {
      // Anchors and tags: the node is what follows them.
      if (c === 0x26) this.skipAnchorName();
      else this.skipTag();
      this.skipFlowSpace();
      const d = this.ch();
      if (d === 0x2c || d === 0x5d || d === 0x7d || d === COLON || d === -1)
        throw new Unsupported("empty node with props");
      this.flowNode(trie, keyAt);
    } else if (c === 0x3f || c === 0x7c || c === 0x3e || c === -1) {
      throw new Unsupported("indicator in flow context");
    } else if (c === 0x2c || c === 0x5d || c === 0x7d || c === COLON) {
      throw new Unsupported("empty flow node");
    } else {
      this.flowPlain();
      this.leaf(trie, keyAt, start);
    }
  }

  /** Past a plain scalar in flow context; one line only. */
  private flowPlain(): void {
    const t = this.t;
    let i = this.p;
    for (; i < this.n; i++) {
      const c = t.charCodeAt(i);
      if (c === LF || c === CR) break;
      if (c === 0x2c || c === 0x5b || c === 0x5d || c === 0x7b || c === 0x7d) break;
      if (c === COLON) {
        const next = this.ch(i + 1);
        if (next === SPACE || next === TAB || next === LF || next === CR || next === -1) break;
        if (next === 0x2c || next === 0x5b || next === 0x5d || next === 0x7b || next === 0x7d) break;
      }
      if (c === HASH && i > this.p) {
        const before = t.charCodeAt(i - 1);
        if (before === SPACE || before === TAB) break;
      }
    }
    this.p = i;
    // A plain scalar that goes on after a line break is left to the document.
    const save = this.p;
    this.skipInlineSpace();
    if (this.ch() === LF || this.ch() === CR) {
      this.skipToContent();
      const c = this.ch();
      if (c !== 0x2c && c !== 0x5d && c !== 0x7d && c !== COLON)
        throw new Unsupported("multi-line plain scalar");
    }
    this.p = save;
  }

  private flowSeq(trie: Trie | undefined, keyAt: number | undefined): void {
    const start = this.p;
    this.answerEnds(trie, keyAt, start);
    const items = trie ? indexChildren(trie) : undefined;
    this.p++;
    let i = 0;
    for (;;) {
      this.skipFlowSpace();
      if (this.ch() === 0x5d) {
        this.p++;
        break;
      }
      this.flowNode(items?.get(i), undefined);
      i++;
      this.skipFlowSpace();
      const c = this.ch();
      if (c === 0x2c) this.p++;
      else if (c === 0x5d) {
        this.p++;
        break;
      } else throw new Unsupported("pair in a flow sequence");
    }
    if (items) {
      for (const [index, child] of items) if (index >= i) this.answerAll(child, start, start);
      for (const child of items.invalid) this.answerAll(child, start, start);
    }
  }

  private flowMap(trie: Trie | undefined, keyAt: number | undefined): void {
    const start = this.p;
    this.answerEnds(trie, keyAt, start);
    const seen = trie && trie.children.size > 0 ? new Set<string>() : undefined;
    this.p++;
    for (;;) {
      this.skipFlowSpace();
      if (this.ch() === 0x7d) {
        this.p++;
        break;
      }
      const at = this.p;
      const k = this.flowKey();
      this.skipFlowSpace();
      if (this.ch() !== COLON) throw new Unsupported("key without a value");
      this.p++;
      this.skipInlineSpace();
      const emptyAt = this.p;
      let child: Trie | undefined;
      if (seen && !seen.has(k)) {
        seen.add(k);
        child = trie!.children.get(k);
      }
      this.skipFlowSpace();
      const c = this.ch();
      if (c === 0x2c || c === 0x7d) this.leaf(child, at, emptyAt);
      else this.flowNode(child, at);
      this.skipFlowSpace();
      const d = this.ch();
      if (d === 0x2c) this.p++;
      else if (d === 0x7d) {
        this.p++;
        break;
      } else throw new Unsupported("flow mapping");
    }
    if (trie && seen) {
      for (const [seg, child] of trie.children)
        if (!seen.has(seg)) this.answerAll(child, keyAt ?? start, start);
    }
  }

  private flowKey(): string {
    const c = this.ch();
    if (c === 0x22 || c === 0x27) return this.quotedKey();
    if (
      c === 0x5b ||
      c === 0x7b ||
      c === 0x26 ||
      c === 0x21 ||
      c === 0x2a ||
      c === 0x3f ||
      c === COLON ||
      c === 0x2c ||
      c === 0x7d
    )
      throw new Unsupported("complex or empty flow key");
    const start = this.p;
    this.flowPlain();
    return plainKey(this.t.slice(start, this.p).trimEnd());
  }
}

/**
 * A trie's children by sequence index. `items[Number(segment)]` is what the document answers:
 * segments that are no index (or a negative or fractional one) find nothing; a non-canonical
 * spelling of an index ("01") is left to the document.
 */
function indexChildren(trie: Trie): Map<number, Trie> & { invalid: Trie[] } {
  const out = new Map<number, Trie>() as Map<number, Trie> & { invalid: Trie[] };
  out.invalid = [];
  for (const [seg, child] of trie.children) {
    const i = Number(seg);
    if (!Number.isInteger(i) || i < 0) out.invalid.push(child);
    else if (String(i) === seg) out.set(i, child);
    else throw new Unsupported("non-canonical index");
  }
  return out;
}
