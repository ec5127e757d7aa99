/**
 * #11.4: a binary file given as a pipeline is "not a text file" (located, exit 1), not a dump;
 * code frames of control-character input never put raw control characters on the terminal.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { Problem } from "../../src/problems/problem.js";
import { locateProblems } from "../../src/source/locate.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { check, one } from "../helpers/pipeline.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

// Anything a terminal acts on: C0 controls but the newline, DEL, C1 controls.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const RAW_CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f]/;

function compileBytes(name: string, bytes: Buffer | string, format = "human") {
  const file = join(tmp.dir, name);
  writeFileSync(file, bytes);
  const r = gpuplan(["compile", file, "--target", "rtx4090", "--format", format]);
  expect(hasCrashed(r), r.stderr).toBe(false);
  return { ...r, file };
}

/** A PNG header and some deflate-like bytes: NUL, ESC, BEL, CR and high bytes, no newline for a while. */
const PNG = Buffer.concat([
  Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 0x0d, 0x49, 0x48, 0x44, 0x52]),
  Buffer.from(
    Array.from({ length: 3000 }, (_, i) => [0x1b, 0x07, 0x0d, 0x9b, 0, 0xff, 0x5b, 0x32, 0x4a][i % 9]!),
  ),
]);

describe("files that are not text", () => {
  it("a binary file is not-a-text-file, located, exit 1, and prints no raw bytes", () => {
    const r = compileBytes("image.png", PNG);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/image\.png:3:1 {2}error {2}.*not a text file.*\[not-a-text-file\]/);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
    expect(r.stderr.length).toBeLessThan(2000);
    const json = compileBytes("image2.png", PNG, "json");
    const problems = (JSON.parse(json.stdout) as { problems: Problem[] }).problems;
    // The first NUL, after the PNG signature's two line feeds.
    expect(problems.map((p) => [p.code, p.line, p.column])).toEqual([["not-a-text-file", 3, 1]]);
  });

  it("UTF-16 is named as such", () => {
    const text = "version: 1\npipelines: []\n";
    const utf16 = Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, "utf16le")]);
    const r = compileBytes("utf16.yaml", utf16, "json");
    const p = one((JSON.parse(r.stdout) as { problems: Problem[] }).problems, "not-a-text-file");
    expect(p.message).toMatch(/UTF-16/);
    expect([p.line, p.column]).toEqual([1, 1]);
    expect(r.exitCode).toBe(1);
  });

  it("Latin-1 text is not silently changed: located at the first byte that is not UTF-8", () => {
    const latin1 = Buffer.from("version: 1\nname: caf\xe9\npipelines: []\n", "latin1");
    const r = compileBytes("latin1.yaml", latin1, "json");
    const p = one((JSON.parse(r.stdout) as { problems: Problem[] }).problems, "not-a-text-file");
    expect([p.line, p.column]).toEqual([2, 10]);
    expect(p.message).toMatch(/UTF-8/);
    expect(p.hint).toMatch(/UTF-8/);
  });

  it("UTF-8 with a byte-order mark and non-ASCII text is fine", () => {
    const loaded = check(
      "\ufeffversion: 1\nname: café ☕\npipelines:\n  - name: p\n    steps: [{ id: a, run: [echo, ü] }]\n",
    );
    expect(loaded.problems).toEqual([]);
  });
});

describe("control characters in text", () => {
  it("raw ESC, BEL and CR in a YAML file: a located syntax error whose frame is escaped", () => {
    const r = compileBytes(
      "ctrl.yaml",
      "version: 1\npipelines:\n  - name: \u001b[31mred\u0007\r\n    steps: []\n",
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/ctrl\.yaml:3:\d+/);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });

  it("escapes written in YAML reach messages escaped, never raw", () => {
    const r = compileBytes(
      "escapes.yaml",
      'version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: a, run: [echo], memory: "\\e]0;pwned\\a\\e[2J" }\n',
    );
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/unknown memory type/);
    expect(r.stderr).not.toMatch(RAW_CONTROL);
  });
});

describe("huge files", () => {
  it("150 MB of newlines is an empty file, located with no table of its 150 million lines", () => {
    const text = "\n".repeat(150_000_000);
    const [empty, later] = locateProblems(
      [
        { code: "empty-file", severity: "error", message: "the file is empty", file: "nl.yaml", offset: 0 },
        { code: "syntax-error", severity: "error", message: "m", file: "nl.yaml", offset: 1000 },
      ],
      [{ file: "nl.yaml", text }],
    );
    expect([empty?.line, empty?.column, later?.line, later?.column]).toEqual([1, 1, 1001, 1]);
  });

  it("a 20 MB file of NUL bytes: one located problem and a short frame, quickly", () => {
    const started = performance.now();
    const r = compileBytes("zeros.yaml", Buffer.alloc(20_000_000));
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/zeros\.yaml:1:1 {2}error {2}the file is not a text file/);
    expect(r.stderr).toMatch(/^ {2}> 1 \| (\\x00){25}…$/m);
    expect(r.stderr.length).toBeLessThan(1000);
    // Escaping the whole line first took about ten seconds (80 MB: a V8 "invalid size" crash).
    expect(performance.now() - started).toBeLessThan(3000);
  });
});
