/**
 * Resolves a problem's JSON pointer to line:column in its source file — only when printing
 * (STYLE.md §5). Unknown/missing properties point at the key, everything else at the value.
 */
import { isMap, isPair, isScalar, isSeq, type Node, type Pair } from "yaml";
import { fromPointer, type Problem } from "../problems/problem.js";
import type { SourceFile } from "./source-file.js";

/** Character offset of what the problem is about; the nearest existing ancestor when the exact node is absent. */
export function offsetOf(source: SourceFile, pointer: string, at: "key" | "value" = "value"): number {
  const doc = source.doc;
  if (!doc?.contents) return 0;
  let node: unknown = doc.contents;
  let pair: Pair | undefined;
  for (const segment of fromPointer(pointer)) {
    if (isMap(node)) {
      const found = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === segment);
      if (!found) return startOf(pair && at === "key" ? (pair.key as Node) : (node as Node));
      pair = found as Pair;
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
  if (at === "key" && pair && isScalar(pair.key)) return startOf(pair.key as Node);
  return startOf(node as Node);
}

function startOf(node: Node | null | undefined): number {
  return node?.range?.[0] ?? 0;
}

/** Fill line and column on every problem that belongs to this source. */
export function locateProblems(problems: Problem[], sources: readonly SourceFile[]): Problem[] {
  return problems.map((p) => {
    const source = sources.find((s) => s.file === p.file);
    if (!source || p.line !== undefined) return p;
    const offset = p.offset ?? (p.pointer !== undefined ? offsetOf(source, p.pointer, p.at) : undefined);
    if (offset === undefined) return p;
    const { line, col } = source.lineCounter.linePos(offset);
    return { ...p, line, column: col };
  });
}
