/**
 * #11.11: a NUL byte cannot be passed to a process (argv, environment and working directory are
 * C strings that end at it), so one in the file is a located error — never silently cut.
 */
import { describe, expect, it } from "vitest";
import { check, one, withCode, yaml } from "../helpers/pipeline.js";

const at = (problems: ReturnType<typeof check>["problems"], code: string) =>
  withCode(problems, code).map((p) => [p.pointer, p.line, p.column]);

describe("NUL bytes", () => {
  it("in argv elements, env values, cwd, worker argv, matrix values and names", () => {
    const loaded = check(yaml`
      version: 1
      defaults:
        cwd: "d\\0d"
        env: { D: "x\\0" }
      pipelines:
        - name: "p\\0q-{x}"
          env: { GOOD: "v\\0v" }
          matrix: { x: ["m\\0m", ok] }
          steps:
            - id: a
              run: [echo, "a\\0b", "{x}"]
              env: { E: "e\\0e" }
            - id: b
              run: "echo \\0"
              shell: true
              cwd: "c\\0c"
            - id: w
              worker: { run: [python3, "w\\0.py"] }
    `);
    // Sorted and once per place, as compile reports them (the defaults are checked per pipeline).
    const places = [...new Set(at(loaded.problems, "nul-byte").map((x) => JSON.stringify(x)))]
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
      "nul-byte",
    );
    expect(p.severity).toBe("error");
    expect(p.message).toContain("NUL");
    expect(p.message).toContain("`a`");
  });

  it("in a defaults env variable named like an Object method, at the defaults", () => {
    const loaded = check(yaml`
      version: 1
      defaults:
        env: { constructor: "c\\0" }
      pipelines:
        - name: p
          steps:
            - { id: a, run: [echo], env: { E: "1" } }
    `);
    expect(at(loaded.problems, "nul-byte")).toEqual([["/defaults/env/constructor", 3, 23]]);
  });

  it("in an env key is a located error at the key", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: a
              run: [echo]
              env: { "K\\0EY": "1", GOOD: "2" }
    `);
    const p = one(loaded.problems, "schema-invalid-value");
    expect(p.pointer).toBe("/pipelines/0/steps/0/env/K\u0000EY");
    expect([p.line, p.column]).toEqual([7, 16]);
    expect(p.message).toMatch(/not a valid name/);
    expect(p.hint).toMatch(/letters, digits and _/);
  });

  it("a file without NUL bytes has none of these problems", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [echo, "a\\\\0b"], env: { E: "tab\there" } }
    `);
    expect(loaded.problems).toEqual([]);
  });
});
