// gpuplan tells two syntax errors apart by the start of js-yaml's `reason` (src/source/source-file.ts):
// js-yaml has no error codes. Pin those phrases here, so that a js-yaml release that rewords them
// fails this test instead of silently turning `duplicate-key` and `multiple-documents` into a
// plain `syntax-error` (docs/architecture.md, "Two YAML parsers").
import { CORE_SCHEMA, load, YAMLException } from "js-yaml";
import { describe, expect, it } from "vitest";
import { parseSource } from "../../src/source/source-file.js";

function reasonOf(text: string): string {
  try {
    load(text, { schema: CORE_SCHEMA });
  } catch (e) {
    if (e instanceof YAMLException) return e.reason;
    throw e;
  }
  throw new Error("js-yaml accepted the text");
}

describe("the js-yaml messages gpuplan matches", () => {
  it.each([
    ["a key twice in a mapping", "duplicated mapping key", "a: 1\nb: 2\na: 3\n", "duplicate-key"],
    ["a key twice in a flow mapping", "duplicated mapping key", "x: { a: 1, a: 2 }\n", "duplicate-key"],
    ["a second document", "expected a single document", "a: 1\n---\nb: 2\n", "multiple-documents"],
    [
      "two documents after a marker",
      "expected a single document",
      "---\na: 1\n---\nb: 2\n",
      "multiple-documents",
    ],
  ])("%s: js-yaml's reason starts with `%s`", (_, phrase, text, code) => {
    expect(reasonOf(text).startsWith(phrase), reasonOf(text)).toBe(true);
    expect(parseSource("f.yaml", text).problems.map((p) => p.code)).toEqual([code]);
  });

  it("any other syntax error stays a syntax-error with js-yaml's reason", () => {
    const text = "a: [1, 2\nb: 3\n";
    const [problem] = parseSource("f.yaml", text).problems;
    expect(problem?.code).toBe("syntax-error");
    expect(problem?.message).toBe(`invalid YAML: ${reasonOf(text)}`);
  });

  it("points at the error in a file that starts with a byte-order mark, as in one without", () => {
    // js-yaml reads past the mark: its positions there are one short.
    for (const text of [
      "a: 1\nb: ]\n",
      "a: 1\n- b\n",
      'a: "\\q"\n',
      "a: 1\nb: 2\na: 3\n",
      "a: 1\n---\nb: 2\n",
    ]) {
      const plain = parseSource("f.yaml", text).problems.map((p) => p.offset ?? Number.NaN);
      const marked = parseSource("f.yaml", `\ufeff${text}`).problems.map((p) => p.offset);
      expect(plain.length, text).toBe(1);
      expect(marked, text).toEqual(plain.map((at) => at + 1));
    }
  });
});
