/**
 * A pipeline file saved with CRLF or lone-CR (classic Mac) line ends reports every problem at the
 * line and column the same file with LF has, and its code frames show its lines: YAML 1.2 breaks
 * lines at each of them, and js-yaml reads them all alike.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { check } from "../helpers/pipeline.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

/** A schema problem at a key, rule problems at values, on lines 5, 7 and 10 (after a quoted line break). */
const PROBLEMS = [
  "version: 1",
  "pipelines:",
  "  - name: p",
  "    steps:",
  "      - { id: a, run: [echo, x], bogus: 1 }",
  "      - id: b",
  "        memory: tensorfloww",
  "        run: [echo, 'two\nlines']",
  "      - { id: c, run: [echo], needs: [zz] }",
  "",
].join("\n");

/** Unclosed flow collection: js-yaml's own offset, at the end of line 6 of 6. */
const SYNTAX = "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: a, run: [echo, x]\n";

const ENDINGS = {
  crlf: (t: string) => t.replaceAll("\n", "\r\n"),
  cr: (t: string) => t.replaceAll("\n", "\r"),
  mixed: (t: string) => t.split("\n").reduce((a, line, i) => a + (i % 2 ? "\r" : "\r\n") + line),
};

const located = (text: string) => check(text).problems.map((p) => [p.code, p.line, p.column]);

describe("line endings", () => {
  for (const [name, convert] of Object.entries(ENDINGS)) {
    it(`${name}: problems at the lines and columns of the LF file`, () => {
      const lf = located(PROBLEMS);
      expect(lf.map(([, line]) => line)).toEqual([5, 7, 10]);
      expect(located(convert(PROBLEMS))).toEqual(lf);
      expect(located(convert(SYNTAX))).toEqual(located(SYNTAX));
      expect(located(SYNTAX)).toEqual([["syntax-error", 6, 1]]);
    });
  }

  it("a lone-CR file's code frame shows its lines, not the whole file as one", () => {
    const file = join(tmp.dir, "mac.yaml");
    writeFileSync(file, ENDINGS.cr(PROBLEMS));
    const r = gpuplan(["compile", file, "--target", "rtx4090"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(`${file}:5:34  error  unknown property \`bogus\``);
    expect(r.stderr).toMatch(/^ {2}> 5 \| {7}- \{ id: a, run: \[echo, x\], bogus: 1 \}$/m);
    expect(r.stderr).toMatch(/^ {2}> 7 \| {9}memory: tensorfloww$/m);
    expect(r.stderr).not.toContain("\\r");
  });
});
