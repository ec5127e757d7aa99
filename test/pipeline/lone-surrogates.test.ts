/**
 * A lone UTF-16 surrogate ("\ud800") is half a character: Node passes argv, the environment and
 * the working directory as UTF-8, which cannot carry it, so the process got U+FFFD instead of what
 * the file says — and compile exited 0. Now a located error wherever a NUL byte is one.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { gpuplan, tempDir } from "../helpers/cli.js";
import { check, one, withCode, yaml } from "../helpers/pipeline.js";

const at = (problems: ReturnType<typeof check>["problems"], code: string) =>
  withCode(problems, code).map((p) => [p.pointer, p.line, p.column]);

describe("lone surrogates", () => {
  it("in argv elements, env values, cwd, worker argv, matrix values and names", () => {
    const loaded = check(yaml`
      version: 1
      defaults:
        cwd: "d\ud800"
        env: { D: "x\udc00" }
      pipelines:
        - name: "p\udbffq-{x}"
          env: { GOOD: "v\ud800v" }
          matrix: { x: ["m\udfffm", ok] }
          steps:
            - id: a
              run: [echo, "a\ud800b", "{x}"]
              env: { E: "e\udc00e" }
            - id: b
              run: "echo \ud800"
              shell: true
              cwd: "c\udc00\ud800"
            - id: w
              worker: { run: [python3, "w\ud800.py"] }
    `);
    const places = [...new Set(at(loaded.problems, "lone-surrogate").map((x) => JSON.stringify(x)))]
      .map((x) => JSON.parse(x) as [string, number, number])
      .sort((x, y) => x[1] - y[1] || x[2] - y[2]);
    expect(places).toEqual([
      ["/defaults/cwd", 3, 8],
      ["/defaults/env/D", 4, 13],
      ["/pipelines/0/name", 6, 11],
      ["/pipelines/0/env/GOOD", 7, 18],
      ["/pipelines/0/matrix/x/0", 8, 19],
      ["/pipelines/0/steps/0/run/1", 11, 21],
      ["/pipelines/0/steps/0/env/E", 12, 19],
      ["/pipelines/0/steps/1/run", 14, 14],
      ["/pipelines/0/steps/1/cwd", 16, 14],
      ["/pipelines/0/steps/2/worker/run/1", 18, 34],
    ]);
    expect(loaded.problems.every((x) => x.severity === "error")).toBe(true);
    const p = one(
      loaded.problems.filter((x) => x.pointer === "/pipelines/0/steps/0/run/1"),
      "lone-surrogate",
    );
    // The message shows the half it found as its escape, never as U+FFFD.
    expect(p.message).toBe(
      "`run[1]` of step `a` holds a lone UTF-16 surrogate (\\ud800), half of a character that no command line, environment or path can carry: the process would get U+FFFD (�) in its place",
    );
    expect(p.hint).toContain("surrogate pair");
    const name = one(
      loaded.problems.filter((x) => x.pointer === "/pipelines/0/name"),
      "lone-surrogate",
    );
    expect(name.message).toContain("pipeline `p\\udbffq-{x}`");
  });

  it("in a JSON file, as JSON writes it", () => {
    const loaded = check(
      '{"version": 1, "pipelines": [{"name": "p", "steps": [{"id": "a", "run": ["echo", "\\udc00"]}]}]}',
    );
    expect(at(loaded.problems, "lone-surrogate")).toEqual([["/pipelines/0/steps/0/run/1", 1, 82]]);
  });

  it("a surrogate pair (one character) and an escaped backslash are no problem", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: "p\ud83d\ude00"
          steps:
            - { id: a, run: [echo, "\ud83d\ude00", "a\\\\ud800b", "😀"], env: { E: "\udbff\udfff" } }
    `);
    expect(loaded.problems).toEqual([]);
  });
});

describe("a lone surrogate in a message", () => {
  it("is shown on the terminal as the file spells it, not as U+FFFD; --format json keeps it as JSON escapes it", () => {
    const t = tempDir();
    try {
      writeFileSync(
        join(t.dir, "p.yaml"),
        'version: 1\nname: t\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [x], memory: "\\ud800nope" }\n',
      );
      const human = gpuplan(["compile", "p.yaml", "--target", "cpu-only"], { cwd: t.dir });
      expect(human.exitCode).toBe(1);
      expect(human.stderr).toContain("unknown memory type `\\ud800nope`");
      expect(human.stderr).not.toContain("\ufffd");
      const json = gpuplan(["compile", "p.yaml", "--target", "cpu-only", "--format", "json"], { cwd: t.dir });
      expect(json.stdout).toContain("unknown memory type `\\ud800nope`");
      expect(JSON.parse(json.stdout).problems[0].message).toBe("unknown memory type `\ud800nope`");
    } finally {
      t.cleanup();
    }
  });
});
