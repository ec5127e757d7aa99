/**
 * Resolves problems' JSON pointers to line:column in their source files — only when printing
 * (STYLE.md §5). Unknown/missing properties point at the key, everything else at the value.
 * All of a file's pointers are found in one streaming pass over its text (scan-offsets.ts);
 * YAML that pass does not handle is read through the `yaml` package's document instead.
 */
import type { Problem } from "../problems/problem.js";
import { type DocumentIndex, documentOffset, indexDocument } from "./document-offsets.js";
import { linePositions } from "./line-positions.js";
import { type OffsetRequest, scanOffsets, Unsupported } from "./scan-offsets.js";
import type { SourceFile } from "./source-file.js";
import { offsetsInScalar } from "./within-scalar.js";

const documents = new WeakMap<SourceFile, DocumentIndex>();

function documentOf(source: SourceFile): DocumentIndex {
  let index = documents.get(source);
  if (!index) {
    index = indexDocument(source.text);
    documents.set(source, index);
  }
  return index;
}

/**
 * Offsets of many requests in one source, keyed by the request objects themselves: a Map keyed
 * by object is told apart by identity, where one keyed by `at` and pointer joined into a string
 * hashed a new string per request, twice (100,000 unknown keys: ~0.2 s of the compile).
 */
export function offsetsOf(
  source: SourceFile,
  requests: readonly OffsetRequest[],
): Map<OffsetRequest, number> {
  if (requests.length === 0) return new Map();
  if (!documents.has(source)) {
    try {
      const found = scanOffsets(source.text, requests);
      if (found.size === requests.length) return found;
    } catch (e) {
      if (!(e instanceof Unsupported)) throw e;
    }
  }
  const index = documentOf(source);
  return new Map(requests.map((r) => [r, documentOffset(index, r)]));
}

/** Fill line and column on every problem that belongs to one of these sources. */
export function locateProblems(problems: Problem[], sources: readonly SourceFile[]): Problem[] {
  // A problem belongs to the first source of its file name; it keeps an offset it was given.
  const sourceOf = problems.map((p) =>
    p.line === undefined ? sources.find((s) => s.file === p.file) : undefined,
  );
  const offsets: (number | undefined)[] = problems.map((p) => p.offset);
  for (const source of sources) {
    const asked: number[] = [];
    const requests: OffsetRequest[] = [];
    problems.forEach((p, i) => {
      if (sourceOf[i] === source && p.offset === undefined && p.pointer !== undefined) {
        asked.push(i);
        requests.push({ pointer: p.pointer, at: p.at ?? "value" });
      }
    });
    const found = offsetsOf(source, requests);
    // Problems about parts of one string value (its placeholders) are placed in one walk over it.
    const partsAt = new Map<number, number[]>();
    asked.forEach((i, k) => {
      const offset = found.get(requests[k]!);
      offsets[i] = offset;
      if (offset === undefined || problems[i]!.within === undefined) return;
      const group = partsAt.get(offset);
      if (group) group.push(i);
      else partsAt.set(offset, [i]);
    });
    for (const [start, group] of partsAt) {
      const placed = offsetsInScalar(
        source.text,
        start,
        group.map((i) => problems[i]!.within!),
      );
      group.forEach((i, k) => {
        offsets[i] = placed[k];
      });
    }
  }
  const positions = new Map<SourceFile, Map<number, { line: number; column: number }>>();
  for (const source of sources) {
    const wanted: number[] = [];
    problems.forEach((_, i) => {
      if (sourceOf[i] === source && offsets[i] !== undefined) wanted.push(offsets[i]!);
    });
    positions.set(source, linePositions(source.text, wanted));
  }
  // The offset stays: a code frame finds the problem's line from it without counting lines.
  return problems.map((p, i) => {
    const source = sourceOf[i];
    const offset = offsets[i];
    if (!source || offset === undefined) return p;
    const { line, column } = positions.get(source)!.get(offset)!;
    // Object.assign, not spread syntax: `{ ...p, offset, ...position }` took ~5 µs a problem here
    // (0.5 s of a compile reporting 100,000 unknown keys), Object.assign under 1 µs.
    return Object.assign({}, p, { offset, line, column });
  });
}
