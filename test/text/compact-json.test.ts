// Compact JSON: what fits the line stays on it, the rest opens one entry per line; it reads back
// as the same value, and escapes what jsonText escapes.
import fc from "fast-check";
import { expect, it } from "vitest";
import { compactJson, valueText } from "../../src/text/compact-json.js";

it("puts a short object or array on one line and opens a long one", () => {
  const value = {
    argv: ["python3", "x.py"],
    memory: { input: "numpy", output: "cupy" },
    empty: { a: {}, b: [] },
    long: Array.from({ length: 30 }, (_, i) => `word-${i}`),
  };
  expect(compactJson(value)).toBe(
    [
      "{",
      '  "argv": ["python3", "x.py"],',
      '  "memory": { "input": "numpy", "output": "cupy" },',
      '  "empty": { "a": {}, "b": [] },',
      '  "long": [',
      ...Array.from({ length: 30 }, (_, i) => `    "word-${i}"${i < 29 ? "," : ""}`),
      "  ]",
      "}",
      "",
    ].join("\n"),
  );
});

it("a line is at most the width, indentation and key included, unless one scalar is longer", () => {
  const value = { key: { a: "x".repeat(40), b: "y".repeat(40) }, inner: [{ z: "z".repeat(80) }] };
  for (const width of [20, 60, 100, 200]) {
    for (const line of compactJson(value, width).split("\n")) {
      const isOneScalar = /^ *("[^"]*": )?"[^"]*",?$/.test(line);
      if (!isOneScalar) expect(line.length, `${width}: ${line}`).toBeLessThanOrEqual(width);
    }
  }
  expect(compactJson({ a: [1, 2] }, 14)).toBe(
    '{ "a": [1, 2] }\n'.replace("{ ", "{\n  ").replace(" }", "\n}"),
  );
  expect(compactJson({ a: [1, 2] }, 15)).toBe('{ "a": [1, 2] }\n');
});

it("reads back as the value it wrote, as JSON.stringify would (undefined left out), whole or as a part", () => {
  fc.assert(
    fc.property(fc.jsonValue(), fc.integer({ min: 10, max: 120 }), (value, width) => {
      const text = compactJson(value, width);
      expect(JSON.parse(text)).toEqual(JSON.parse(JSON.stringify(value)));
      // As the entry of a list, indented: the same value.
      expect(JSON.parse(`[\n  ${valueText(value, "  ", width)}\n]`)).toEqual([JSON.parse(text)]);
    }),
  );
  expect(JSON.parse(compactJson({ a: undefined, b: [undefined, 1] }))).toEqual({ b: [null, 1] });
});

it("escapes DEL, C1 controls and line separators as jsonText does", () => {
  const text = compactJson({ a: "x\u0085y\u007f\u2028" });
  expect(text).toContain("\\u0085");
  expect(text).toContain("\\u007f");
  expect(text).toContain("\\u2028");
  expect(JSON.parse(text)).toEqual({ a: "x\u0085y\u007f\u2028" });
});
