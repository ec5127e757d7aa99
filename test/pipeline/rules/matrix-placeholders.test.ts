import { describe, expect, it } from "vitest";
import { check, one, pipelines, withCode, yaml } from "../../helpers/pipeline.js";

describe("rule: matrix placeholders", () => {
  it("reports an unknown variable with a did-you-mean, at the value", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: plate-{plate}
          matrix: { plate: [1, 2] }
          steps:
            - id: load
              run: [load, "{plat}"]
    `);
    const p = one(loaded.problems, "unknown-matrix-variable");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`{plat}`");
    expect(p.message).toContain("pipeline `plate-{plate}`");
    expect(p.hint).toBe("did you mean `{plate}`?");
    expect(p.pointer).toBe("/pipelines/0/steps/0/run/1");
    expect([p.line, p.column]).toEqual([7, 21]);
  });

  it("checks env, cwd and the pipeline env too", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p-{a}
          matrix: { a: [1, 2] }
          env: { P: "{zz}" }
          steps:
            - { id: s, run: [x], env: { X: "{yy}" }, cwd: "work/{xx}" }
    `);
    const pointers = withCode(loaded.problems, "unknown-matrix-variable").map((p) => p.pointer);
    expect(pointers.sort()).toEqual([
      "/pipelines/0/env/P",
      "/pipelines/0/steps/0/cwd",
      "/pipelines/0/steps/0/env/X",
    ]);
  });

  it("explains literal braces when there is no matrix", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: s, run: [echo, "{x}"] }
    `);
    const p = one(loaded.problems, "unknown-matrix-variable");
    expect(p.hint).toContain("{{");
  });

  it("takes {{ and }} as literal braces", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: s, run: [echo, "{{x}}"] }
    `);
    expect(loaded.problems).toEqual([]);
    expect(pipelines(loaded)[0]!.steps[0]!.argv).toEqual(["echo", "{x}"]);
  });

  it("requires the name to use every variable that varies", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: train-{lr}
          matrix: { lr: [1, 2], seed: [0, 1], fixed: [x] }
          steps:
            - { id: s, run: [x, "{seed}", "{fixed}"] }
    `);
    const p = one(loaded.problems, "matrix-name-not-unique");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`{seed}`");
    expect(p.message).not.toContain("`{fixed}`");
    expect(p.hint).toBe("e.g. name: train-{lr}-{seed}");
    expect(p.pointer).toBe("/pipelines/0/name");
    expect([p.line, p.column]).toEqual([3, 11]);
  });

  it("is quiet when every variable is used and known", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: train-{lr}-{seed}
          matrix: { lr: [1, 2], seed: [0, 1] }
          steps:
            - { id: s, run: [x, "{lr}", "{seed}"] }
    `);
    expect(loaded.problems).toEqual([]);
  });
});
