/** Random damage to a pipeline file, as text and as data: what a fuzz test feeds the compiler. */
import fc from "fast-check";
import { parse, stringify } from "yaml";

type Json = null | boolean | number | string | Json[] | { [k: string]: Json };
type Path = (string | number)[];

function paths(value: Json, at: Path = []): Path[] {
  const out: Path[] = at.length ? [at] : [];
  if (Array.isArray(value)) {
    for (const [i, v] of value.entries()) out.push(...paths(v, [...at, i]));
  } else if (value !== null && typeof value === "object")
    for (const [k, v] of Object.entries(value)) out.push(...paths(v, [...at, k]));
  return out;
}

function parentOf(root: Json, path: Path): { parent: Json[] | Record<string, Json>; key: string | number } {
  let node = root as Json[] | Record<string, Json>;
  for (const seg of path.slice(0, -1)) node = (node as Record<string, Json>)[seg as string] as typeof node;
  return { parent: node, key: path[path.length - 1]! };
}

const scalar: fc.Arbitrary<Json> = fc.oneof(
  fc.constantFrom<Json>(
    null,
    true,
    false,
    0,
    -1,
    1.5,
    Number.MAX_VALUE,
    "",
    "0",
    "12GiB",
    "12 gigs",
    "30s",
    "Torch",
    "{x}",
    "{{",
    "cuda:0",
    "*",
  ),
  fc.integer(),
  fc.double({ noNaN: true }),
  fc.string({ maxLength: 12 }),
);
const value: fc.Arbitrary<Json> = fc.oneof(
  { weight: 3, arbitrary: scalar },
  fc.array(scalar, { maxLength: 3 }),
  fc.dictionary(fc.constantFrom("id", "run", "memory", "vram", "needs", "name", "steps", "x"), scalar, {
    maxKeys: 3,
  }),
);

export type Mutation = { describe: string; apply: (text: string) => string };

/** Edits on the parsed data, written back as YAML. */
const dataMutation: fc.Arbitrary<Mutation> = fc
  .tuple(
    fc.constantFrom("delete", "retype", "rename", "duplicate-item"),
    fc.nat(),
    value,
    fc.string({ maxLength: 8 }),
  )
  .map(([kind, pick, v, name]) => ({
    describe: `${kind} #${pick} ${JSON.stringify(v)} ${JSON.stringify(name)}`,
    apply: (text: string) => {
      const data = parse(text) as Json;
      const all = paths(data);
      if (all.length === 0) return text;
      const path = all[pick % all.length]!;
      const { parent, key } = parentOf(data, path);
      if (Array.isArray(parent)) {
        const i = key as number;
        if (kind === "delete") parent.splice(i, 1);
        else if (kind === "duplicate-item") parent.splice(i, 0, structuredClone(parent[i]!));
        else parent[i] = v;
      } else {
        const k = key as string;
        if (kind === "delete") delete parent[k];
        else if (kind === "rename") {
          parent[name || "x"] = parent[k]!;
          if (name !== k) delete parent[k];
        } else if (kind === "duplicate-item") parent[`${k}_`] = structuredClone(parent[k]!);
        else parent[k] = v;
      }
      return stringify(data);
    },
  }));

/** Edits on the raw text: truncation, bytes, indentation, duplicated or deleted lines. */
const textMutation: fc.Arbitrary<Mutation> = fc
  .tuple(
    fc.constantFrom(
      "truncate",
      "insert-bytes",
      "indent",
      "dedent",
      "duplicate-line",
      "delete-line",
      "swap-lines",
    ),
    fc.nat(),
    fc.nat(),
    fc.uint8Array({ minLength: 1, maxLength: 6 }),
  )
  .map(([kind, a, b, bytes]) => ({
    describe: `${kind} ${a} ${b} ${[...bytes].join(",")}`,
    apply: (text: string) => {
      const lines = text.split("\n");
      const i = a % lines.length;
      const j = b % lines.length;
      switch (kind) {
        case "truncate":
          return text.slice(0, a % (text.length + 1));
        case "insert-bytes": {
          const at = a % (text.length + 1);
          return text.slice(0, at) + Buffer.from(bytes).toString("latin1") + text.slice(at);
        }
        case "indent":
          lines[i] = `${" ".repeat((b % 5) + 1)}${lines[i]}`;
          break;
        case "dedent":
          lines[i] = lines[i]!.replace(new RegExp(`^ {1,${(b % 4) + 1}}`), "");
          break;
        case "duplicate-line":
          lines.splice(i, 0, lines[i]!);
          break;
        case "delete-line":
          lines.splice(i, 1);
          break;
        case "swap-lines":
          [lines[i], lines[j]] = [lines[j]!, lines[i]!];
          break;
      }
      return lines.join("\n");
    },
  }));

/** One to three mutations of either kind, applied in order. */
export const mutations: fc.Arbitrary<Mutation[]> = fc.array(fc.oneof(dataMutation, textMutation), {
  minLength: 1,
  maxLength: 3,
});

export function applyAll(text: string, ms: readonly Mutation[]): string {
  let out = text;
  for (const m of ms) {
    try {
      out = m.apply(out);
    } catch {
      // A data mutation on text that no longer parses: keep the text as it is.
    }
  }
  return out;
}
