/**
 * A file that starts with a byte-order mark (as Windows editors and PowerShell 5 write UTF-8)
 * shows line 1 without it. Positions located by JSON pointer counted the mark as line 1's first
 * column, so `version: 2` was at 1:11 where editors show 1:10 (every column of a one-line JSON
 * file one too high), and the code frame printed the mark as `\ufeff` before the line. Now a
 * marked file's positions and frames are those of the same file without the mark.
 */
import { describe, expect, it } from "vitest";
import { codeFrame } from "../../src/source/code-frame.js";
import { check } from "../helpers/pipeline.js";

const MARK = "\ufeff";

/** Each problem's code, place and code frame, as the human format prints them. */
function shown(text: string) {
  return check(text).problems.map((p) => ({
    code: p.code,
    line: p.line,
    column: p.column,
    frame: codeFrame(text, {
      line: p.line!,
      column: p.column!,
      ...(p.offset !== undefined && { offset: p.offset }),
    }),
  }));
}

describe("a file that starts with a byte-order mark", () => {
  it("has line 1's problems at the columns editors show, in YAML", () => {
    const text = "version: 2\npipelines:\n  - name: p\n    steps: [{ id: a, run: [echo], bogus: 1 }]\n";
    const marked = shown(MARK + text);
    expect(marked.map((p) => [p.code, p.line, p.column])).toEqual([
      ["schema-invalid-value", 1, 10],
      ["schema-unknown-property", 4, 35],
    ]);
    expect(marked[0]!.frame).not.toContain("ufeff");
    expect(marked[0]!.frame).toContain("> 1 | version: 2\n    |          ^");
    expect(marked).toEqual(shown(text));
  });

  it("has every column of a one-line JSON file as without the mark", () => {
    const text =
      '{"version": 2, "pipelines": [{"name": "p", "steps": [{"id": "a", "run": ["echo"], "x": 1}]}]}';
    const marked = shown(MARK + text);
    expect(marked.map((p) => [p.line, p.column])).toEqual([
      [1, 13],
      [1, 83],
    ]);
    expect(marked).toEqual(shown(text));
  });

  it("has a problem at the file's start (a %YAML 1.1 directive) at 1:1", () => {
    const text = "%YAML 1.1\n---\nversion: 1\npipelines:\n  - name: p\n    steps: [{ id: a, run: [echo] }]\n";
    expect(shown(MARK + text)).toEqual(shown(text));
    expect(shown(MARK + text).map((p) => [p.code, p.line, p.column])).toEqual([["yaml-version", 1, 1]]);
  });
});
