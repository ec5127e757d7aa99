/**
 * A YAML sequence or mapping used as a mapping key (`? [a, b]`, `{[a, b]: 1}`, an alias of a list
 * as a key). js-yaml turns such a key into a string (`a,b`, `[object Object]`), so a device-map
 * override or an `env` entry came out under a name the file never wrote and the step compiled.
 * Found in the `yaml` package's document, built only when the text may hold one: it keeps key
 * nodes as nodes, and reads these keys as js-yaml does even where it reports other errors. Where
 * it does report some, js-yaml's data (what gpuplan compiles) must hold the key (loaded-key.ts).
 */
import type { Node } from "yaml";
import { mayHaveAliasKey, mayHaveFlowCollectionKey } from "./key-scan.js";
import { dataKeys, keyName } from "./loaded-key.js";
import { DOCUMENT_OPTIONS, yaml } from "./yaml-module.js";

/** One is enough to say what is wrong; a file with more is not hand-written. */
const MAX_REPORTED = 20;

/**
 * Whether the text may hold a collection key: an explicit key (`?`), a flow collection closed
 * just before a `:`, one where a flow mapping's key starts (`{[a, b]}`, `{b: 1, [c]}`, a key
 * without a value), or an alias before a `:`, `,` or `}` (its anchor may name a collection), with
 * blanks and comments between (key-scan.ts). Cheap and generous: a hit in a comment or a quoted
 * string only costs building the document. A text that is JSON holds no collection key at all,
 * and the first patterns do not occur in JSON outside its strings, so a big generated JSON file is
 * never read by the yaml package; the others do (`[{…}, {…}]`, `[1, [2]]`, `"a*b,"`), and a hit
 * there counts only when the text is not JSON.
 */
export function mayHoldCollectionKey(text: string): boolean {
  return (
    /[\]}][ \t]*:/.test(text) ||
    /(?:^|[\s,[{])\?(?:[ \t\r\n]|$)/m.test(text) ||
    /\{\s*(?:[&!][^\s,[\]{}]*\s+)*[[{]/.test(text) ||
    (text.includes("&") && /\*[^\s,[\]{}]+\s*[:,}]/.test(text)) ||
    ((mayHaveFlowCollectionKey(text) || (text.includes("&") && mayHaveAliasKey(text))) && !isJson(text))
  );
}

/**
 * Whether the text is JSON: telling a flow mapping from a flow sequence needs a parser, and
 * JSON.parse is many times faster than either YAML reader. Only a text that opens with a
 * bracket can be JSON that holds one.
 */
function isJson(text: string): boolean {
  if (!/^\s*[[{]/.test(text)) return false;
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
}

/**
 * Offsets of the keys that are collections (or aliases of one) and that js-yaml's `data` holds as
 * text, in file order; at most MAX_REPORTED.
 */
export function collectionKeyOffsets(text: string, data: unknown): number[] {
  const { parseDocument, visit, isAlias, isCollection } = yaml();
  const doc = parseDocument(text, DOCUMENT_OPTIONS);
  const found: number[] = [];
  // Without errors of its own the yaml package reads the text as js-yaml does.
  let names: Set<string> | undefined;
  const inData = (key: unknown) => {
    if (doc.errors.length === 0) return true;
    names ??= dataKeys(data);
    return names.has(keyName(doc, key));
  };
  visit(doc, {
    Pair(_, pair) {
      const key = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
      if (isCollection(key) && inData(pair.key)) found.push((pair.key as Node).range?.[0] ?? 0);
      return found.length >= MAX_REPORTED ? visit.BREAK : undefined;
    },
  });
  return found.sort((a, b) => a - b);
}
