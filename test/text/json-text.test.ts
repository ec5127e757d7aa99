// DEL and the C1 controls reach a terminal raw through JSON.stringify; jsonText writes them as
// \u escapes (the fuzz campaign found a plan printed on stdout carrying U+0085 and DEL from a
// matrix value and a step id).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { expect, it } from "vitest";
import { jsonText } from "../../src/text/json-text.js";
import { gpuplan, tempDir } from "../helpers/cli.js";

// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

it("escapes DEL, C1 controls and line separators, and the value reads back the same", () => {
  const value = { a: "x\u0085y\u007fz\u009b[2J\u2028", b: ["\u0080"] };
  const text = jsonText(value, 2);
  expect(text).not.toMatch(RAW_CONTROL);
  expect(text).toContain("\\u0085");
  expect(text).toContain("\\u009b");
  expect(JSON.parse(text)).toEqual(value);
  expect(jsonText({ plain: "é ünïcode" })).toBe(JSON.stringify({ plain: "é ünïcode" }));
  // A bidi override or zero-width character would turn round or hide what a terminal shows.
  expect(jsonText({ name: "evil\u202egnp.exe\u200b" })).toBe('{"name":"evil\\u202egnp.exe\\u200b"}');
});

it("a plan printed on stdout carries no raw control character from the pipeline file", () => {
  const t = tempDir();
  try {
    const file = join(t.dir, "p.yaml");
    writeFileSync(
      file,
      'version: 1\npipelines:\n  - name: p-{v}\n    matrix: { v: ["\\x85echo", "\\x7fid"] }\n    steps:\n      - { id: a, run: [echo, "{v}"] }\n',
    );
    const r = gpuplan(["compile", file, "--target", "cpu-only"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).not.toMatch(RAW_CONTROL);
    const plan = JSON.parse(r.stdout);
    expect(plan.pipelines.map((p: { name: string }) => p.name)).toEqual(["p-\u0085echo", "p-\u007fid"]);
  } finally {
    t.cleanup();
  }
});
