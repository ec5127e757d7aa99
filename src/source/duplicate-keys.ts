/**
 * Every key that appears twice in one mapping, with where its first appearance is. js-yaml stops
 * at the first duplicate and says neither the key nor the other place, so a file with several
 * took one compile per duplicate. Read from the `yaml` package's document, built only on this
 * error path (as locate.ts does), with duplicate keys allowed so that it sees them all.
 */
import type { Node } from "yaml";
import { DOCUMENT_OPTIONS, yaml } from "./yaml-module.js";

export interface DuplicateKey {
  key: string;
  /** Offset of the repeated key. */
  offset: number;
  /** Offset of the key's first appearance in the same mapping. */
  firstOffset: number;
}

/** Enough to fix a file in one go; a file with more is not hand-written. */
const MAX_DUPLICATES = 100;

/** The duplicate keys of `text`, in file order; at most MAX_DUPLICATES. */
export function duplicateKeys(text: string): DuplicateKey[] {
  const { parseDocument, visit, isAlias, isScalar } = yaml();
  const doc = parseDocument(text, DOCUMENT_OPTIONS);
  const found: DuplicateKey[] = [];
  visit(doc, {
    Map(_, map) {
      const first = new Map<string, number>();
      for (const pair of map.items) {
        // An alias key (`*k : 2`) is the key its anchor names, as js-yaml reads it: skipped, its
        // duplicate was said only as "a key appears twice", naming neither key nor place.
        const named = isAlias(pair.key) ? pair.key.resolve(doc) : pair.key;
        if (!isScalar(named)) continue;
        const key = String(named.value);
        const offset = (pair.key as Node).range?.[0] ?? 0;
        const earlier = first.get(key);
        if (earlier === undefined) first.set(key, offset);
        else found.push({ key, offset, firstOffset: earlier });
      }
      return found.length >= MAX_DUPLICATES ? visit.BREAK : undefined;
    },
  });
  return found.sort((a, b) => a.offset - b.offset).slice(0, MAX_DUPLICATES);
}
