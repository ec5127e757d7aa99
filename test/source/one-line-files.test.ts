/**
 * #11.9: a 200 KB pipeline written as one JSON line gives normal located errors; its code frames
 * show a window around the column, not the whole line (today: a RangeError and 1.3 GB).
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { codeFrame } from "../../src/source/code-frame.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());

describe("one-line files", () => {
  it("a 200 KB single-line JSON pipeline: located errors, frames of a window, exit 1", () => {
    const pipelines = Array.from({ length: 1500 }, (_, i) => ({
      name: `p${i}`,
      steps: [
        { id: "a", run: ["python3", "x.py"], memory: "torch", vram: "4GiB", bogus: 1 },
        { id: "b", run: ["echo"], memory: "numpy" },
      ],
    }));
    const text = JSON.stringify({ version: 1, pipelines });
    expect(text.length).toBeGreaterThan(200_000);
    expect(text).not.toContain("\n");
    const file = join(tmp.dir, "one-line.json");
    writeFileSync(file, text);
    const r = gpuplan(["compile", file, "--target", "rtx4090"]);
    expect(hasCrashed(r), r.stderr.slice(-2000)).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/1500 errors, 0 warnings; no plan written/);
    // 50 shown in full, the rest counted (human.ts); the JSON report has all of them, located.
    const located = [...r.stderr.matchAll(/one-line\.json:1:(\d+) {2}error {2}unknown property `bogus`/g)];
    expect(located).toHaveLength(50);
    expect(r.stderr).toContain("… 1,450 more not shown (1,450 errors): 1,450 schema-unknown-property;");
    for (const [, column] of located)
      expect(text.slice(Number(column) - 1, Number(column) + 6)).toBe('"bogus"');
    const json = gpuplan(["compile", file, "--target", "rtx4090", "--format", "json"]);
    const all = (JSON.parse(json.stdout) as { problems: { column: number }[] }).problems;
    expect(all).toHaveLength(1500);
    const last = all.at(-1)!.column;
    expect(text.slice(last - 1, last + 6)).toBe('"bogus"');
    // No line of the report is anywhere near the file's width.
    const widest = Math.max(...r.stderr.split("\n").map((l) => l.length));
    expect(widest).toBeLessThan(200);
    expect(r.stderr.length).toBeLessThan(2_000_000);
  });
});

describe("code frame window", () => {
  const line = `${"a".repeat(500)}X${"b".repeat(500)}`;

  it("shows a window around the column with the caret under it", () => {
    const frame = codeFrame(line, { line: 1, column: 501 });
    const [shown, caret] = frame.split("\n");
    expect(shown!.length).toBeLessThan(140);
    expect(shown).toMatch(/\| …a+Xb+…$/);
    expect(shown!.indexOf("X")).toBe(caret!.indexOf("^"));
  });

  it("keeps short lines whole and cuts long neighbours to the same window", () => {
    const frame = codeFrame(["short", line, "x".repeat(2000)].join("\n"), { line: 2, column: 501 }).split(
      "\n",
    );
    expect(frame[0]).toMatch(/\| short$/);
    expect(frame[1]!.indexOf("X")).toBe(frame[2]!.indexOf("^"));
    expect(frame[3]!.length).toBeLessThan(140);
  });

  it("a column at the start or the end of a long line", () => {
    const start = codeFrame(line, { line: 1, column: 1 }).split("\n");
    expect(start[0]).toMatch(/\| a+…$/);
    expect(start[1]).toMatch(/\| \^$/);
    const end = codeFrame(line, { line: 1, column: line.length }).split("\n");
    expect(end[0]).toMatch(/\| …b+$/);
    expect(end[0]!.length - 1).toBe(end[1]!.indexOf("^"));
  });

  it("never cuts a character in two", () => {
    const emoji = "😀".repeat(300);
    const frame = codeFrame(emoji, { line: 1, column: 301 });
    expect(frame).not.toMatch(/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/);
  });
});
