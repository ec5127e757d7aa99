/**
 * YAML merge keys (`<<: *defaults`) are a YAML 1.1 type that the 1.2 core schema gpuplan reads
 * does not have: js-yaml reads `<<` as a plain key, so the keys meant to be merged are missing and
 * the schema said "unknown property `<<`" (did you mean `id`?) beside "missing `run`". Found
 * here, so the file is reported for what it is.
 */
import { toPointer } from "../problems/problem.js";

/** At most this many merge keys are reported; one is enough to say what is wrong. */
const MAX_REPORTED = 20;

/** Pointers to the `<<` keys in the data, in document order; a node shared by aliases is seen once. */
export function mergeKeyPointers(data: unknown): string[] {
  const found: string[] = [];
  const seen = new Set<object>();
  // One path, pushed and popped: copying it per node costs depth × nodes on deep data.
  const path: (string | number)[] = [];
  const walk = (node: unknown): void => {
    if (found.length >= MAX_REPORTED || node === null || typeof node !== "object" || seen.has(node)) return;
    seen.add(node);
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((v, i) => [i, v])
      : Object.entries(node);
    for (const [key, value] of entries) {
      path.push(key);
      if (key === "<<" && !Array.isArray(node)) found.push(toPointer(path));
      walk(value);
      path.pop();
    }
  };
  walk(data);
  return found.slice(0, MAX_REPORTED);
}
