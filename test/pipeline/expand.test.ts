import { describe, expect, it } from "vitest";
import { expandMatrix, substitute } from "../../src/pipeline/expand-matrix.js";
import { check, one, pipelines, yaml } from "../helpers/pipeline.js";

describe("matrix expansion", () => {
  it("is a cartesian product, first variable slowest, in written order", () => {
    expect(expandMatrix({ a: [1, 2], b: ["x", "y", "z"] })).toEqual([
      { a: "1", b: "x" },
      { a: "1", b: "y" },
      { a: "1", b: "z" },
      { a: "2", b: "x" },
      { a: "2", b: "y" },
      { a: "2", b: "z" },
    ]);
    expect(expandMatrix(undefined)).toEqual([{}]);
    expect(expandMatrix({ flag: [true, false] })).toEqual([{ flag: "true" }, { flag: "false" }]);
  });

  it("substitutes {var}, keeps {{ }} as literal braces and collects unknown names", () => {
    const unknown = new Set<string>();
    expect(substitute("{a}-{{a}}-{b}-}}", { a: "1" }, unknown)).toBe("1-{a}-{b}-}");
    expect([...unknown]).toEqual(["b"]);
    // Only the matrix's own variables: not what every object inherits.
    const inherited = new Set<string>();
    expect(substitute("{constructor}-{toString}", {}, inherited)).toBe("{constructor}-{toString}");
    expect([...inherited]).toEqual(["constructor", "toString"]);
  });

  it("substitutes in name, argv, env and cwd of every expansion", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: train-lr{lr}-seed{seed}
          matrix: { lr: ["1e-3", "3e-4"], seed: [0, 1] }
          env: { RUN: "lr{lr}" }
          steps:
            - id: train
              run: [python3, train.py, --lr, "{lr}", --seed, "{seed}", "{{literal}}"]
              env: { SEED: "{seed}" }
              cwd: "runs/{lr}/{seed}"
    `);
    expect(loaded.problems).toEqual([]);
    const ps = pipelines(loaded);
    expect(ps.map((p) => p.name)).toEqual([
      "train-lr1e-3-seed0",
      "train-lr1e-3-seed1",
      "train-lr3e-4-seed0",
      "train-lr3e-4-seed1",
    ]);
    const last = ps[3]!;
    expect(last.template).toBe("train-lr{lr}-seed{seed}");
    expect(last.matrix).toEqual({ lr: "3e-4", seed: "1" });
    expect(last.steps[0]!.argv).toEqual(["python3", "train.py", "--lr", "3e-4", "--seed", "1", "{literal}"]);
    expect(last.steps[0]!.env).toEqual({ RUN: "lr3e-4", SEED: "1" });
    expect(last.steps[0]!.cwd).toBe("runs/3e-4/1");
    // Every expansion keeps the template's pointer, so problems point into the file.
    expect(new Set(ps.map((p) => p.pointer))).toEqual(new Set(["/pipelines/0"]));
  });

  it("reports a name used by two pipeline entries, at the later name", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: plate-{n}
          matrix: { n: [1, 2] }
          steps: [{ id: s, run: [x] }]
        - name: plate-2
          steps: [{ id: s, run: [x] }]
    `);
    const p = one(loaded.problems, "duplicate-pipeline-name");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`plate-2`");
    expect(p.pointer).toBe("/pipelines/1/name");
    expect([p.line, p.column]).toEqual([6, 11]);
  });

  it.each([
    ["a repeated value", "p-{v}", "{ v: [a, a] }", '{ v: "a" } and { v: "a" }', "p-a"],
    ['1 and "1"', "p-{v}", '{ v: [1, "1"] }', '{ v: "1" } and { v: "1" }', "p-1"],
    ['true and "true"', "p-{v}", '{ v: [true, "true"] }', '{ v: "true" } and { v: "true" }', "p-true"],
    ["a repeated value the name leaves out", "p", "{ v: [a, a] }", '{ v: "a" } and { v: "a" }', "p"],
    [
      "placeholders that run together",
      "p-{a}{b}",
      '{ a: ["1", "11"], b: ["1", ""] }',
      '{ a: "1", b: "1" } and { a: "11", b: "" }',
      "p-11",
    ],
  ])("reports two combinations that make one name: %s", (_, name, matrix, combos, made) => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: ${name}
          matrix: ${matrix}
          steps: [{ id: s, run: [x] }]
    `);
    const p = one(loaded.problems, "duplicate-pipeline-name");
    expect(p.message).toBe(`two combinations of the matrix make the pipeline name \`${made}\`: ${combos}`);
    expect(p.pointer).toBe("/pipelines/0/name");
    expect([p.line, p.column]).toEqual([3, 11]);
  });

  it("says a name that leaves out a varying variable once, as the matrix rule", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          matrix: { v: [a, b, c] }
          steps: [{ id: s, run: [x] }]
    `);
    expect(loaded.problems.map((p) => p.code)).toEqual(["matrix-name-not-unique"]);
  });

  it("leaves a template with a one-value matrix alone", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: only
          matrix: { gpu: [a100] }
          steps: [{ id: s, run: [x, "{gpu}"] }]
    `);
    expect(loaded.problems).toEqual([]);
    expect(pipelines(loaded).map((p) => [p.name, p.steps[0]!.argv])).toEqual([["only", ["x", "a100"]]]);
  });
});
