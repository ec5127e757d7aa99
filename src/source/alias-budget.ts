/**
 * YAML aliases (`*name`) repeat the node an anchor (`&name`) names. js-yaml shares that node
 * instead of copying it, so parsing a "billion laughs" file is quick — but everything after it
 * (the schema check, normalizing, compiling) walks the data as a tree and would repeat the
 * node as many times as the aliases say: 10⁹ times for a 400-byte file. So the data is measured
 * as a tree, in one walk over its shared nodes, before anything else looks at it.
 */
import { toPointer } from "../problems/problem.js";

/** Nodes aliases may repeat in all, beyond the ones written. Documented in the README. */
// 100,000 nodes is about 20,000 steps: far more than anchors are for (a shared env, a step list
// reused a few times); a file that repeats more wants a matrix, which its own limits bound.
export const MAX_ALIAS_NODES = 100_000;

/**
 * Characters aliases may repeat in all, beyond the text's own. A node count alone lets one alias
 * of a 1 MB string stand for 1 MB: 2,000 of them made a 2 GB plan from a 1 MB file. 10 MB is a
 * hundred characters for each of the nodes above.
 */
export const MAX_ALIAS_CHARS = 10_000_000;

export interface AliasOverrun {
  /** Where the alias that crossed the budget (or closed a cycle) is. */
  pointer: string;
  kind: "budget" | "characters" | "cycle";
  /** Nodes the aliases repeat up to and including this one (Infinity for a cycle). */
  repeated: number;
}

/** What a subtree holds as a tree: its nodes, and the characters of its strings and keys. */
interface Size {
  nodes: number;
  chars: number;
}

/**
 * Walks the data in document order. An object met for the second time is an alias: it adds the
 * size of its whole subtree (known from its first visit) to the nodes repeated so far.
 *
 * An aliased string is the same string value as the one anchored, which nothing can tell apart
 * from a string written twice; but the data, as a tree, cannot hold more characters than the text
 * it was parsed from (escapes, folding and indentation only shrink a scalar) except where aliases
 * repeat them. So `textLength` plus MAX_ALIAS_CHARS bounds the characters the walk meets, and the
 * node where the count crosses it is reported.
 */
export function aliasOverrun(
  data: unknown,
  textLength: number,
  budget = MAX_ALIAS_NODES,
  charBudget = MAX_ALIAS_CHARS,
): AliasOverrun | undefined {
  const size = new Map<object, Size>();
  const open = new Set<object>();
  const path: (string | number)[] = [];
  const maxChars = textLength + charBudget;
  let repeated = 0;
  let chars = 0;
  let overrun: AliasOverrun | undefined;

  const addChars = (n: number): boolean => {
    chars += n;
    if (chars <= maxChars) return false;
    overrun = { pointer: toPointer(path), kind: "characters", repeated };
    return true;
  };

  /** The node's size as a tree (1 per node); stops at the first overrun. */
  const visit = (node: object): Size => {
    const known = size.get(node);
    if (known !== undefined) {
      repeated += known.nodes;
      if (repeated > budget) overrun = { pointer: toPointer(path), kind: "budget", repeated };
      else addChars(known.chars);
      return known;
    }
    if (open.has(node)) {
      overrun = { pointer: toPointer(path), kind: "cycle", repeated: Number.POSITIVE_INFINITY };
      return { nodes: Number.POSITIVE_INFINITY, chars: Number.POSITIVE_INFINITY };
    }
    open.add(node);
    const total: Size = { nodes: 1, chars: 0 };
    const isList = Array.isArray(node);
    const entries: [string | number, unknown][] = isList ? node.map((v, i) => [i, v]) : Object.entries(node);
    for (const [key, child] of entries) {
      path.push(key);
      const keyChars = isList ? 0 : (key as string).length;
      if (typeof child === "object" && child !== null) {
        if (!addChars(keyChars)) {
          const s = visit(child);
          total.nodes += s.nodes;
          total.chars += keyChars + s.chars;
        }
      } else {
        total.nodes += 1;
        const n = keyChars + (typeof child === "string" ? child.length : 0);
        total.chars += n;
        addChars(n);
      }
      path.pop();
      if (overrun) break;
    }
    open.delete(node);
    size.set(node, total);
    return total;
  };
  if (typeof data === "object" && data !== null) visit(data);
  return overrun;
}
