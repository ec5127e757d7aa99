import { describe, expect, it } from "vitest";
import { error, type Problem } from "../../src/problems/problem.js";
import { locateProblems } from "../../src/source/locate.js";

const pipeline = { file: "p.yaml", text: "version: 1\npipelines:\n  - name: a\n    extra: 1\n" };
const inventory = { file: "inv.yaml", text: "gpus:\n  - name: x\n" };

describe("locateProblems", () => {
  it("places each problem in its own file, the same pointer asked twice answered twice", () => {
    const problems: Problem[] = [
      error({
        code: "schema-unknown-property",
        message: "a",
        file: "p.yaml",
        pointer: "/pipelines/0/extra",
        at: "key",
      }),
      error({ code: "schema-invalid-value", message: "b", file: "p.yaml", pointer: "/pipelines/0/extra" }),
      error({ code: "schema-invalid-value", message: "c", file: "p.yaml", pointer: "/pipelines/0/extra" }),
      error({ code: "schema-invalid-value", message: "d", file: "inv.yaml", pointer: "/gpus/0/name" }),
      error({ code: "syntax-error", message: "e", file: "inv.yaml", offset: 6 }),
      { ...error({ code: "syntax-error", message: "f", file: "p.yaml" }), line: 9, column: 9 },
      error({ code: "schema-invalid-value", message: "g", file: "elsewhere.yaml", pointer: "/x" }),
      error({ code: "internal-error", message: "h" }),
    ];
    const located = locateProblems(problems, [pipeline, inventory]);
    expect(located.map((p) => [p.message, p.line, p.column])).toEqual([
      ["a", 4, 5],
      ["b", 4, 12],
      ["c", 4, 12],
      ["d", 2, 11],
      ["e", 2, 1],
      ["f", 9, 9],
      ["g", undefined, undefined],
      ["h", undefined, undefined],
    ]);
    // Given places are kept, and the problems that could not be placed are the very same objects.
    expect(located[4]!.offset).toBe(6);
    expect(located[5]).toBe(problems[5]);
    expect(located[6]).toBe(problems[6]);
    expect(problems[0]!.line).toBeUndefined();
  });

  it("places a problem in the first of two sources with its name", () => {
    const again = { file: "p.yaml", text: "\n\n\n\nversion: 1\n" };
    const [p] = locateProblems(
      [error({ code: "schema-invalid-value", message: "v", file: "p.yaml", pointer: "/version" })],
      [pipeline, again],
    );
    expect([p!.line, p!.column]).toEqual([1, 10]);
  });

  it("places a problem under an alias key at the key as written, not at its mapping or the anchor", () => {
    const text = [
      "name: &k vram", // 1
      "*k : 12 gigs", // 2: an alias key at the top level, once placed at 1:1
      "b:", // 3
      "  *k : 12 gigs", // 4
      "c: { *k : 1 }", // 5
      "names: &s steps", // 6
      "d:", // 7
      "  *s :", // 8
      "    - id: s", // 9
      "      vram: 12 gigs", // 10
      "",
    ].join("\n");
    const at = (pointer: string, where: "key" | "value") =>
      error({
        code: "schema-invalid-value",
        message: `${pointer} ${where}`,
        file: "p.yaml",
        pointer,
        at: where,
      });
    const located = locateProblems(
      [
        at("/vram", "key"),
        at("/vram", "value"),
        at("/b/vram", "key"),
        at("/b/vram", "value"),
        at("/c/vram", "key"),
        at("/d/steps", "key"),
        at("/d/steps/0/vram", "value"),
        at("/d/steps/0/run", "key"),
      ],
      [{ file: "p.yaml", text }],
    );
    expect(located.map((p) => [p.message, p.line, p.column])).toEqual([
      ["/vram key", 2, 1],
      ["/vram value", 2, 6],
      ["/b/vram key", 4, 3],
      ["/b/vram value", 4, 8],
      ["/c/vram key", 5, 6],
      ["/d/steps key", 8, 3],
      ["/d/steps/0/vram value", 10, 13],
      ["/d/steps/0/run key", 9, 7],
    ]);
  });
});
