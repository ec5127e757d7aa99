/**
 * Where JSON pointers point, read from the `yaml` package's position-keeping document: the
 * reference answer, used for YAML the streaming scanner (scan-offsets.ts) leaves alone. Each
 * mapping's keys are indexed once, so locating many problems in one big mapping stays linear.
 */
import type { Document, Node, Pair, YAMLMap } from "yaml";
import { fromPointer } from "../problems/problem.js";
import type { OffsetRequest } from "./scan-offsets.js";
import { DOCUMENT_OPTIONS, yaml } from "./yaml-module.js";

export interface DocumentIndex {
  doc: Document;
  keys: WeakMap<YAMLMap, Map<string, Pair>>;
}

export function indexDocument(text: string): DocumentIndex {
  return { doc: yaml().parseDocument(text, DOCUMENT_OPTIONS), keys: new WeakMap() };
}

/**
 * The first pair of each key, as `items.find` would give it. An alias key (`*k : v`) is indexed
 * by the scalar its anchor names, as js-yaml names the key in the data: skipped, a problem under
 * it was placed at its mapping (1:1 at the top level), or at the anchor.
 */
function pairsOf(index: DocumentIndex, map: YAMLMap): Map<string, Pair> {
  let pairs = index.keys.get(map);
  if (!pairs) {
    const { isAlias, isPair, isScalar } = yaml();
    pairs = new Map();
    for (const p of map.items) {
      if (!isPair(p)) continue;
      const key = isAlias(p.key) ? p.key.resolve(index.doc) : p.key;
      if (!isScalar(key)) continue;
      const k = String(key.value);
      if (!pairs.has(k)) pairs.set(k, p as Pair);
    }
    index.keys.set(map, pairs);
  }
  return pairs;
}

/** Character offset of what a request is about; the nearest existing ancestor when the exact node is absent. */
export function documentOffset(index: DocumentIndex, { pointer, at }: OffsetRequest): number {
  const { doc } = index;
  if (!doc.contents) return 0;
  const { isMap, isSeq } = yaml();
  let node: unknown = doc.contents;
  let pair: Pair | undefined;
  for (const segment of fromPointer(pointer)) {
    if (isMap(node)) {
      const found = pairsOf(index, node as YAMLMap).get(segment);
      if (!found) return startOf(pair && at === "key" ? (pair.key as Node) : (node as Node));
      pair = found;
      node = found.value;
    } else if (isSeq(node)) {
      const item = node.items[Number(segment)];
      if (item === undefined) return startOf(node as Node);
      pair = undefined;
      node = item;
    } else {
      return startOf(node as Node);
    }
  }
  // The key as written: an alias key at its `*`, not at the anchor it names.
  if (at === "key" && pair) return startOf(pair.key as Node);
  return startOf(node as Node);
}

function startOf(node: Node | null | undefined): number {
  return node?.range?.[0] ?? 0;
}
