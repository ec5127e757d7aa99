/**
 * The streaming locator answers exactly what the `yaml` document answers (positions identical),
 * for every path of random documents in many YAML styles and for damaged pipeline files; it
 * handles the styles pipeline files are written in without falling back; and locating many
 * problems stays linear.
 */
import { readdirSync, readFileSync } from "node:fs";
import fc from "fast-check";
import { CORE_SCHEMA, dump, load } from "js-yaml";
import { describe, expect, it } from "vitest";
import { stringify } from "yaml";
import { toPointer } from "../../src/problems/problem.js";
import { documentOffset, indexDocument } from "../../src/source/document-offsets.js";
import { offsetsOf } from "../../src/source/locate.js";
import { type OffsetRequest, scanOffsets, Unsupported } from "../../src/source/scan-offsets.js";
import { applyAll, mutations } from "../fuzz/mutations.js";
import { check, one } from "../helpers/pipeline.js";
import { yamlText } from "./yaml-styles.js";

/** Every path in the data, and paths one step past each: a missing key, an index past the end, below a scalar. */
function requestsFor(data: unknown): OffsetRequest[] {
  const out: (string | number)[][] = [];
  const walk = (v: unknown, at: (string | number)[]) => {
    out.push(at);
    if (at.length > 8) return; // aliases can make the data cyclic
    if (Array.isArray(v)) {
      for (const [i, x] of v.entries()) walk(x, [...at, i]);
      out.push([...at, v.length], [...at, "x"]);
    } else if (v !== null && typeof v === "object") {
      for (const [k, x] of Object.entries(v)) walk(x, [...at, k]);
      out.push([...at, "zz"]);
    } else out.push([...at, "deeper"], [...at, 0]);
  };
  walk(data, []);
  return out.flatMap((p) => (["key", "value"] as const).map((at) => ({ pointer: toPointer(p), at })));
}

/** Compares the scanner with the document on one text; false when the scanner declined it. */
function agrees(text: string): boolean {
  let data: unknown;
  try {
    data = load(text, { schema: CORE_SCHEMA });
  } catch {
    return true; // only text js-yaml accepted is ever located
  }
  const requests = requestsFor(data);
  let fast: Map<OffsetRequest, number>;
  try {
    fast = scanOffsets(text, requests);
  } catch (e) {
    if (e instanceof Unsupported) return false;
    throw e;
  }
  const index = indexDocument(text);
  if (index.doc.errors.length > 0) return true; // the document's own answer is a guess there
  for (const r of requests) {
    expect(fast.get(r), `${r.at} ${r.pointer} in ${JSON.stringify(text)}`).toBe(documentOffset(index, r));
  }
  return true;
}

const EXAMPLES = readdirSync("examples")
  .filter((f) => f.endsWith(".yaml"))
  .map((f) => readFileSync(`examples/${f}`, "utf8"));

describe("streaming locator", () => {
  it("handles every example without falling back, with the document's answers", () => {
    for (const text of EXAMPLES) expect(agrees(text)).toBe(true);
  });

  it("agrees with the document on random YAML in many styles", () => {
    let handled = 0;
    fc.assert(
      fc.property(yamlText, (text) => {
        if (agrees(text)) handled++;
      }),
      { numRuns: 400 },
    );
    // Most of what people write is handled by the scanner, not the slow document.
    expect(handled).toBeGreaterThan(300);
  });

  it("agrees with the document on JSON and on yaml's and js-yaml's own output", () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), (v) => {
        agrees(JSON.stringify(v));
        agrees(JSON.stringify(v, null, 2));
        agrees(stringify(v));
        agrees(stringify(v, { collectionStyle: "flow" }));
        agrees(dump(v, { flowLevel: 1 }));
      }),
      { numRuns: 200 },
    );
  });

  it("agrees with the document on damaged pipeline files", () => {
    fc.assert(
      fc.property(fc.nat({ max: EXAMPLES.length - 1 }), mutations, (i, ms) => {
        agrees(applyAll(EXAMPLES[i]!, ms));
      }),
      { numRuns: 200 },
    );
  });

  it("falls back to the document for YAML it leaves alone", () => {
    const text = "? complex\n: 1\nb:\n  c: 2\n";
    expect(() => scanOffsets(text, [{ pointer: "/b/c", at: "value" }])).toThrow(Unsupported);
    const request: OffsetRequest = { pointer: "/b/c", at: "value" };
    expect(offsetsOf({ file: "f", text }, [request]).get(request)).toBe(text.indexOf("2"));
  });

  // Today's attack: 100,000 unknown keys (1.4 MB) took 77 s to locate, each key searched for in
  // the whole mapping. Linear locating takes a second or two; the generous timeout only catches
  // the quadratic path.
  it("locates 100,000 unknown keys in one pass", { timeout: 60_000 }, () => {
    const keys = Array.from({ length: 100_000 }, (_, i) => `unknown_${i}: 1`).join("\n");
    const text = `version: 1\npipelines:\n  - name: p\n    steps: [{ id: a, run: [echo] }]\n${keys}\n`;
    const loaded = check(text);
    expect(loaded.problems).toHaveLength(100_000);
    const last = loaded.problems.find((p) => p.pointer === "/unknown_99999")!;
    expect([last.line, last.column]).toEqual([100_004, 1]);
    expect(
      one(
        loaded.problems.filter((p) => p.pointer === "/unknown_0"),
        "schema-unknown-property",
      ).line,
    ).toBe(5);
  });
});

describe("a JSON document nested 100,000 deep", () => {
  // JSON.parse reads it (a plan file); locating a problem in it overflowed the scan's stack and
  // ended `gpuplan run` with an internal error. The scan now declines it and the document answers.
  const depth = 100_000;
  const text = `${'{"a":'.repeat(depth)}1${"}".repeat(depth)}`;

  it("is declined by the scan, not a stack overflow", () => {
    expect(() => scanOffsets(text, [{ pointer: "/schema", at: "key" }])).toThrow(Unsupported);
  });

  it("is still located", () => {
    const found = offsetsOf({ file: "deep.json", text }, [{ pointer: "/schema", at: "key" }]);
    expect([...found.values()]).toEqual([0]);
  });
});
