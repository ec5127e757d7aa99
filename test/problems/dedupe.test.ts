import { describe, expect, it } from "vitest";
import { dedupeProblems } from "../../src/problems/dedupe.js";
import { error, type Problem, warning } from "../../src/problems/problem.js";

const at = (pointer: string, code: Problem["code"], message: string, file = "p.yaml") =>
  error({ code, message, file, pointer });

describe("dedupeProblems", () => {
  it("keeps one problem per code and place, in first-seen order, and counts the others that differ", () => {
    const problems = [
      at("/pipelines/0/steps/0/vram", "size-out-of-range", "vram of cell-0 is too large"),
      at("/pipelines/1", "schema-unknown-property", "unknown property `x`"),
      at("/pipelines/0/steps/0/vram", "size-out-of-range", "vram of cell-1 is too large"),
      at("/pipelines/0/steps/0/vram", "size-out-of-range", "vram of cell-2 is too large"),
      at("/pipelines/0/steps/0/vram", "size-out-of-range", "vram of cell-2 is too large"),
    ];
    expect(dedupeProblems(problems).map((p) => p.message)).toEqual([
      "vram of cell-0 is too large (and 2 more like it)",
      "unknown property `x`",
    ]);
  });

  it("keeps problems of other codes, severities or files at the same place apart", () => {
    const place = "/pipelines/0/steps/0";
    const problems = [
      at(place, "missing-vram", "a"),
      at(place, "unknown-memory-type", "b"),
      warning({ code: "missing-vram", message: "c", file: "p.yaml", pointer: place }),
      at(place, "missing-vram", "d", "q.yaml"),
      at(place, "unknown-memory-type", "b"),
      at(place, "missing-vram", "a", "q.yaml"),
    ];
    const kept = dedupeProblems(problems);
    expect(kept.map((p) => `${p.severity} ${p.code} ${p.file} ${p.message}`)).toEqual([
      "error missing-vram p.yaml a",
      "error unknown-memory-type p.yaml b",
      "warning missing-vram p.yaml c",
      "error missing-vram q.yaml d (and 1 more like it)",
    ]);
  });

  it("tells a pointer from an offset, and problems with neither apart by code", () => {
    const problems: Problem[] = [
      error({ code: "syntax-error", message: "x", file: "p.yaml", offset: 5 }),
      error({ code: "syntax-error", message: "y", file: "p.yaml", pointer: "5" }),
      error({ code: "syntax-error", message: "z", file: "p.yaml", offset: 5 }),
      error({ code: "internal-error", message: "no place" }),
      error({ code: "unreadable-file", message: "no place either" }),
      error({ code: "internal-error", message: "no place" }),
    ];
    expect(dedupeProblems(problems).map((p) => p.message)).toEqual([
      "x (and 1 more like it)",
      "y",
      "no place",
      "no place either",
    ]);
  });

  it("reads 100,000 distinct problems back unchanged and in order", () => {
    const problems = Array.from({ length: 100_000 }, (_, i) =>
      at(`/unknown_${i}`, "schema-unknown-property", `unknown property \`unknown_${i}\``),
    );
    const kept = dedupeProblems(problems);
    expect(kept).toHaveLength(100_000);
    expect(kept.every((p, i) => p === problems[i])).toBe(true);
  });

  it("keeps the placeholders of one string apart, and is quick with 40,000 of them", () => {
    const problems = Array.from({ length: 40_000 }, (_, i) =>
      error({
        code: "unknown-matrix-variable",
        message: "`{a}` is not a matrix variable",
        file: "p.yaml",
        pointer: "/pipelines/0/steps/0/run/1",
        within: { index: 3 * i, text: "{a}" },
      }),
    );
    const started = performance.now();
    const kept = dedupeProblems([...problems, ...problems]);
    expect(kept.map((p) => p.within?.index)).toEqual(problems.map((p) => p.within?.index));
    // One chain of 40,000 groups at the pointer, walked for each problem, took seconds.
    expect(performance.now() - started).toBeLessThan(1000);
  });
});
