/**
 * Whether js-yaml's data holds a key that the `yaml` package's document has. The two readers part
 * ways on some texts: a quoted string continued on a column-0 line is one string to js-yaml, while
 * the `yaml` package reports an error and recovers into new entries, one of them a `[then]: …`
 * whose list key the file's data does not have. The data is what gpuplan compiles, so such a key
 * counts only where the data has its name. Anywhere in the data, not at the document's place for
 * it: after such an error the document may hold a real key somewhere else than the data does.
 */
import type { Document } from "yaml";
import { yaml } from "./yaml-module.js";

/** Every key of every mapping in `data` (js-yaml's), each mapping read once however often aliases repeat it. */
export function dataKeys(data: unknown): Set<string> {
  const keys = new Set<string>();
  const seen = new Set<object>();
  const pending: unknown[] = [data];
  while (pending.length > 0) {
    const value = pending.pop();
    if (typeof value !== "object" || value === null || seen.has(value)) continue;
    seen.add(value);
    // One at a time: spreading a list of a million items overflows the stack.
    if (Array.isArray(value)) for (const item of value) pending.push(item);
    else
      for (const [key, entry] of Object.entries(value)) {
        keys.add(key);
        pending.push(entry);
      }
  }
  return keys;
}

/**
 * The key as js-yaml names it in the data: a scalar's value as text, a list's items joined with
 * commas (a mapping item as `[object Object]`), a mapping as `[object Object]`. Built by hand: the
 * `yaml` package's toJS of a mapping whose key is a collection prints a process warning.
 */
export function keyName(doc: Document, key: unknown): string {
  const { isMap, isSeq } = yaml();
  const node = resolved(doc, key);
  if (isMap(node)) return "[object Object]";
  // As String(array): a null item is empty text.
  if (isSeq(node)) return node.items.map((item) => itemText(doc, item)).join(",");
  return String(scalarValue(doc, node));
}

function itemText(doc: Document, item: unknown): string {
  const node = resolved(doc, item);
  if (yaml().isMap(node)) return "[object Object]";
  const value = scalarValue(doc, node);
  return value === null ? "" : String(value);
}

const resolved = (doc: Document, node: unknown): unknown => {
  const { isAlias } = yaml();
  return isAlias(node) ? node.resolve(doc) : node;
};

/** A scalar's value; null for an empty key or item (a list nested in a key is a js-yaml error). */
const scalarValue = (doc: Document, node: unknown): unknown =>
  yaml().isScalar(node) ? node.toJS(doc) : null;
