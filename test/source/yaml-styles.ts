/**
 * Random YAML text in the styles people write: block and flow collections, compact sequences,
 * plain/quoted/block scalars, empty values, comments, blank lines, anchors, tags and aliases,
 * indentation from 1 to 4, CRLF line ends. Used to check the streaming locator against the
 * `yaml` document it stands in for.
 */
import fc from "fast-check";

type Tree = null | string | number | boolean | Tree[] | { [k: string]: Tree };

const keyArb = fc.oneof(
  fc.constantFrom(
    "id",
    "run",
    "name",
    "steps",
    "env",
    "memory",
    "a b",
    "x-y",
    "k.0",
    "true",
    "null",
    "on",
    "1",
    "0x1F",
    "-",
    "'q'",
    "a:b",
    "#c",
    "toString",
    "__proto__",
  ),
  fc.string({ maxLength: 6 }),
);
const scalarArb = fc.oneof(
  fc.constantFrom<Tree>(
    "",
    "echo",
    "a b",
    "12GiB",
    "cuda:0",
    "{x}",
    "a: b",
    "a #b",
    "#",
    "- x",
    "line\nbreak",
    "'",
    '"',
    "\\",
    "~",
    "null",
    "yes",
  ),
  fc.integer(),
  fc.boolean(),
  fc.constant(null),
  fc.string({ maxLength: 8 }),
);
const treeArb: fc.Arbitrary<Tree> = fc.letrec<{ tree: Tree }>((tie) => ({
  tree: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    scalarArb,
    fc.array(tie("tree"), { maxLength: 4 }),
    fc.dictionary(keyArb, tie("tree"), { maxKeys: 4 }),
  ),
})).tree;

interface Style {
  indent: number;
  flowAt: number;
  crlf: boolean;
  comments: boolean;
  anchors: boolean;
  compact: boolean;
  seed: number;
}

const styleArb: fc.Arbitrary<Style> = fc.record({
  indent: fc.integer({ min: 1, max: 4 }),
  flowAt: fc.integer({ min: 0, max: 4 }),
  crlf: fc.boolean(),
  comments: fc.boolean(),
  anchors: fc.boolean(),
  compact: fc.boolean(),
  seed: fc.nat(),
});

/** A small deterministic chooser so one style seed gives one rendering. */
function chooser(seed: number) {
  let s = seed || 1;
  return (n: number): number => {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    return s % n;
  };
}

const PLAIN_SAFE = /^[A-Za-z_][A-Za-z0-9_ .-]*$/;
const CORE = /^(null|Null|NULL|true|True|TRUE|false|False|FALSE|~)$/;

function scalarText(v: Tree, pick: (n: number) => number, asKey: boolean): string {
  if (v === null) return pick(3) === 0 && !asKey ? "~" : "null";
  if (typeof v !== "string") return String(v);
  const plainOk = PLAIN_SAFE.test(v) && !CORE.test(v) && !v.endsWith(" ");
  const choice = pick(3);
  if (plainOk && choice !== 0) return v;
  if (choice === 1 && !v.includes("\n")) return `'${v.replaceAll("'", "''")}'`;
  // Now and then a quoted value broken over lines, the second one indented anyhow.
  if (!asKey && v.includes(" ") && pick(3) === 0)
    return JSON.stringify(v).replace(" ", `\n${" ".repeat(pick(5))}`);
  return JSON.stringify(v);
}

function render(tree: Tree, style: Style): string {
  const pick = chooser(style.seed);
  let anchor = 0;
  const anchors: string[] = [];
  const props = (): string => {
    if (!style.anchors || pick(4) !== 0) return "";
    if (pick(3) === 0) return "!!str ";
    const name = `a${anchor++}`;
    anchors.push(name);
    return `&${name} `;
  };
  const comment = (): string => (style.comments && pick(4) === 0 ? ` # c${pick(9)}` : "");
  const blank = (): string => (style.comments && pick(6) === 0 ? (pick(2) ? "\n" : "\n# note\n") : "");

  const flow = (v: Tree): string => {
    const anchored = style.anchors && pick(6) === 0 ? `&f${anchor++} ` : "";
    return anchored + flowBody(v);
  };
  const flowBody = (v: Tree): string => {
    if (Array.isArray(v)) return `[${v.map(flow).join(pick(2) ? ", " : ",")}]`;
    if (v !== null && typeof v === "object")
      return `{${Object.entries(v)
        .map(([k, x]) => `${scalarText(k, pick, true)}: ${flow(x)}`)
        .join(", ")}}`;
    if (typeof v === "string" && v.includes("\n")) return JSON.stringify(v);
    const t = scalarText(v, pick, false);
    return /[,[\]{}#:]/.test(t) && !t.startsWith('"') && !t.startsWith("'") ? JSON.stringify(t) : t;
  };

  /** Lines of a node placed after `prefix` (a key and colon, or a dash) at column `col`. */
  const block = (v: Tree, depth: number, col: number): { inline: string; lines: string[] } => {
    const pad = " ".repeat(col);
    if (depth >= style.flowAt && v !== null && typeof v === "object") return { inline: flow(v), lines: [] };
    if (Array.isArray(v)) {
      if (v.length === 0) return { inline: "[]", lines: [] };
      const lines: string[] = [];
      for (const item of v) {
        if (
          item !== null &&
          typeof item === "object" &&
          !Array.isArray(item) &&
          Object.keys(item).length > 0 &&
          depth + 1 < style.flowAt &&
          style.compact
        ) {
          // `- key: value` with the rest of the mapping under it.
          const inner = block(item, depth + 1, col + 2);
          lines.push(`${pad}- ${inner.lines[0]!.trimStart()}`, ...inner.lines.slice(1));
          continue;
        }
        const inner = block(item, depth + 1, col + style.indent);
        if (inner.lines.length) lines.push(`${pad}-${comment()}`, ...inner.lines);
        else lines.push(`${pad}- ${inner.inline}${comment()}`);
        const b = blank();
        if (b) lines.push(b.slice(1));
      }
      return { inline: "", lines };
    }
    if (v !== null && typeof v === "object") {
      const entries = Object.entries(v);
      if (entries.length === 0) return { inline: "{}", lines: [] };
      const lines: string[] = [];
      for (const [k, x] of entries) {
        const key = `${pad}${scalarText(k, pick, true)}:`;
        const p = props();
        if (x === null && pick(3) === 0) {
          lines.push(`${key}${pick(2) ? " " : ""}${comment()}`);
          continue;
        }
        if (
          typeof x === "string" &&
          x.length > 0 &&
          pick(4) === 0 &&
          !/^\s|\s$/.test(x) &&
          !x.includes("\r")
        ) {
          lines.push(`${key} ${p}|${pick(2) ? "-" : ""}${comment()}`);
          for (const l of x.split("\n")) lines.push(l === "" ? "" : `${pad}${" ".repeat(style.indent)}${l}`);
          continue;
        }
        const compactSeq =
          Array.isArray(x) && x.length > 0 && style.compact && depth + 1 < style.flowAt && !p;
        const inner = block(x, depth + 1, compactSeq ? col : col + style.indent);
        if (inner.lines.length) lines.push(`${key}${p ? ` ${p.trimEnd()}` : ""}${comment()}`, ...inner.lines);
        else lines.push(`${key} ${p}${inner.inline}${comment()}`);
        if (style.anchors && anchors.length && pick(5) === 0)
          lines.push(`${pad}${scalarText(`${k}_alias`, pick, true)}: *${anchors[pick(anchors.length)]}`);
        const b = blank();
        if (b) lines.push(b.slice(1));
      }
      return { inline: "", lines };
    }
    return { inline: scalarText(v, pick, false), lines: [] };
  };

  const top = block(tree, 0, 0);
  const body = top.lines.length ? top.lines.join("\n") : top.inline;
  const head = style.comments && pick(2) ? "# head\n" : "";
  const text = `${head}${pick(4) === 0 ? "---\n" : ""}${body}\n`;
  return style.crlf ? text.replaceAll("\n", "\r\n") : text;
}

export const yamlText: fc.Arbitrary<string> = fc.tuple(treeArb, styleArb).map(([t, s]) => render(t, s));
