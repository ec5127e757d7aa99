/**
 * Resolves a problem's JSON pointer to line:column in its source file — only when printing
 * (STYLE.md §5). Unknown/missing properties point at the key, everything else at the value.
 * The position-keeping `yaml` document is built here, lazily, once per source.
 */
import { createRequire } from "node:module";
import type { Document, Node, Pair } from "yaml";
import { fromPointer, type Problem } from "../problems/problem.js";
import type { SourceFile } from "./source-file.js";

// `yaml` is loaded on first use (synchronously, so locating stays a plain function): a clean
// compile never locates anything and should not pay for loading it.
type YamlModule = typeof import("yaml");
let yamlModule: YamlModule | undefined;
const yaml = (): YamlModule => (yamlModule ??= createRequire(import.meta.url)("yaml") as YamlModule);

const documents = new WeakMap<SourceFile, Document>();
const lineStarts = new WeakMap<SourceFile, number[]>();

function documentOf(source: SourceFile): Document {
  let doc = documents.get(source);
  if (!doc) {
    doc = yaml().parseDocument(source.text, { uniqueKeys: false, prettyErrors: false });
    documents.set(source, doc);
  }
  return doc;
}

/** Character offset of what the problem is about; the nearest existing ancestor when the exact node is absent. */
function offsetOf(source: SourceFile, pointer: string, at: "key" | "value" = "value"): number {
  const doc = documentOf(source);
  if (!doc.contents) return 0;
  const { isMap, isPair, isScalar, isSeq } = yaml();
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

/** 1-based line and column of a character offset. */
function linePosition(source: SourceFile, offset: number): { line: number; column: number } {
  let starts = lineStarts.get(source);
  if (!starts) {
    starts = [0];
    for (let i = 0; i < source.text.length; i++) if (source.text.charCodeAt(i) === 10) starts.push(i + 1);
    lineStarts.set(source, starts);
  }
  let lo = 0;
  let hi = starts.length - 1;
  while (lo < hi) {
    const mid = (lo + hi + 1) >> 1;
    if (starts[mid]! <= offset) lo = mid;
    else hi = mid - 1;
  }
  return { line: lo + 1, column: offset - starts[lo]! + 1 };
}

/** Fill line and column on every problem that belongs to one of these sources. */
export function locateProblems(problems: Problem[], sources: readonly SourceFile[]): Problem[] {
  return problems.map((p) => {
    const source = sources.find((s) => s.file === p.file);
    if (!source || p.line !== undefined) return p;
    const offset = p.offset ?? (p.pointer !== undefined ? offsetOf(source, p.pointer, p.at) : undefined);
    if (offset === undefined) return p;
    const { line, column } = linePosition(source, offset);
    return { ...p, line, column };
  });
}
