/**
 * Resolves problems' JSON pointers to line:column in their source files — only when printing
 * (STYLE.md §5). Unknown/missing properties point at the key, everything else at the value.
 * All of a file's pointers are found in one streaming pass over its text (scan-offsets.ts);
 * YAML that pass does not handle is read through the `yaml` package's document instead.
 */
import type { Problem } from "../problems/problem.js";
import { type DocumentIndex, documentOffset, indexDocument } from "./document-offsets.js";
import { linePositions } from "./line-positions.js";
import { type OffsetRequest, requestKey, scanOffsets, Unsupported } from "./scan-offsets.js";
import type { SourceFile } from "./source-file.js";

const documents = new WeakMap<SourceFile, DocumentIndex>();

function documentOf(source: SourceFile): DocumentIndex {
  let index = documents.get(source);
  if (!index) {
    index = indexDocument(source.text);
    documents.set(source, index);
  }
  return index;
}

/** Offsets of many requests in one source, keyed by `requestKey`. */
export function offsetsOf(source: SourceFile, requests: readonly OffsetRequest[]): Map<string, number> {
  if (requests.length === 0) return new Map();
  if (!documents.has(source)) {
    try {
      const found = scanOffsets(source.text, requests);
      if (requests.every((r) => found.has(requestKey(r)))) return found;
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
    }
  }
  const index = documentOf(source);
  return new Map(requests.map((r) => [requestKey(r), documentOffset(index, r)]));
}

/** Fill line and column on every problem that belongs to one of these sources. */
export function locateProblems(problems: Problem[], sources: readonly SourceFile[]): Problem[] {
  const offsets = new Map<SourceFile, Map<string, number>>();
  for (const source of sources) {
    const requests: OffsetRequest[] = [];
    for (const p of problems) {
      if (p.file === source.file && p.line === undefined && p.offset === undefined && p.pointer !== undefined)
        requests.push({ pointer: p.pointer, at: p.at ?? "value" });
    }
    offsets.set(source, offsetsOf(source, requests));
  }
  const offsetOf = (p: Problem, source: SourceFile): number | undefined =>
    p.offset ??
    (p.pointer !== undefined
      ? offsets.get(source)!.get(requestKey({ pointer: p.pointer, at: p.at ?? "value" }))
      : undefined);
  const positions = new Map<SourceFile, Map<number, { line: number; column: number }>>();
  for (const source of sources) {
    const wanted = problems.flatMap((p) =>
      p.file === source.file && p.line === undefined ? (offsetOf(p, source) ?? []) : [],
    );
    positions.set(source, linePositions(source.text, wanted));
  }
  // The offset stays: a code frame finds the problem's line from it without counting lines.
  return problems.map((p) => {
    const source = sources.find((s) => s.file === p.file);
    if (!source || p.line !== undefined) return p;
    const offset = offsetOf(p, source);
    if (offset === undefined) return p;
    return { ...p, offset, ...positions.get(source)!.get(offset)! };
  });
}
