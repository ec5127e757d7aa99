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

export interface AliasOverrun {
  /** Where the alias that crossed the budget (or closed a cycle) is. */
  pointer: string;
  kind: "budget" | "cycle";
  /** Nodes the aliases repeat up to and including this one (Infinity for a cycle). */
  repeated: number;
}

/**
 * Walks the data in document order. An object met for the second time is an alias: it adds the
 * size of its whole subtree (known from its first visit) to the nodes repeated so far.
 */
export function aliasOverrun(data: unknown, budget = MAX_ALIAS_NODES): AliasOverrun | undefined {
  const size = new Map<object, number>();
  const open = new Set<object>();
  const path: (string | number)[] = [];
  let repeated = 0;
  let overrun: AliasOverrun | undefined;

  /** The node's size as a tree (1 per node); stops at the first overrun. */
  const visit = (node: object): number => {
    const known = size.get(node);
    if (known !== undefined) {
      repeated += known;
      if (repeated > budget) overrun = { pointer: toPointer(path), kind: "budget", repeated };
      return known;
    }
    if (open.has(node)) {
      overrun = { pointer: toPointer(path), kind: "cycle", repeated: Number.POSITIVE_INFINITY };
      return Number.POSITIVE_INFINITY;
    }
    open.add(node);
    let total = 1;
    const entries: [string | number, unknown][] = Array.isArray(node)
      ? node.map((v, i) => [i, v])
      : Object.entries(node);
    for (const [key, child] of entries) {
      if (typeof child === "object" && child !== null) {
        path.push(key);
        total += visit(child);
        path.pop();
        if (overrun) break;
      } else {
        total += 1;
      }
    }
    open.delete(node);
    size.set(node, total);
    return total;
  };
  if (typeof data === "object" && data !== null) visit(data);
  return overrun;
}
