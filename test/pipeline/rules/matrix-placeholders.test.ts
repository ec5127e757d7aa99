import { describe, expect, it } from "vitest";
import { codeFrame } from "../../../src/source/code-frame.js";
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
    expect([p.line, p.column]).toEqual([7, 22]); // at `{plat}`, inside its quotes
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

  it("points at the placeholder itself, in block and flow, plain and quoted scalars", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p-{plate}-{nme}
          matrix: { plate: [1, 2] }
          env: { P: "a\\tb {pp}", Q: 'it''s {qq}' }
          steps:
            - id: s
              run: ["segment --well {wel}"]
              cwd: work/{cw}
            - { id: t, run: [x, '{aa} {bb}'], env: { X: "\\U0001F600 {ee}" } }
    `);
    const at = (name: string) => {
      const found = withCode(loaded.problems, "unknown-matrix-variable").filter((p) =>
        p.message.startsWith(`\`{${name}}\``),
      );
      expect(found, name).toHaveLength(1);
      return [found[0]!.line, found[0]!.column];
    };
    expect(at("nme")).toEqual([3, 21]);
    expect(at("pp")).toEqual([5, 21]); // after the two characters of `\t`
    expect(at("qq")).toEqual([5, 38]); // after the two characters of `''`
    expect(at("wel")).toEqual([8, 31]);
    expect(at("cw")).toEqual([9, 19]);
    expect(at("aa")).toEqual([10, 28]);
    expect(at("bb")).toEqual([10, 33]);
    expect(at("ee")).toEqual([10, 63]); // after the ten characters of \U0001F600
  });

  it("puts the code frame's caret under the placeholder", () => {
    const text = yaml`
      version: 1
      pipelines:
        - name: p-{plate}
          matrix: { plate: [1, 2] }
          steps:
            - { id: s, run: ["segment --well {wel}"] }
    `;
    const p = one(check(text).problems, "unknown-matrix-variable");
    const frame = codeFrame(text, { line: p.line!, column: p.column!, offset: p.offset! }).split("\n");
    const marked = frame.findIndex((l) => l.startsWith(">"));
    const caret = frame[marked + 1]!.indexOf("^");
    expect(frame[marked]!.slice(caret)).toMatch(/^\{wel\}/);
  });

  it("stays at the scalar's start where the placeholder is not written as it reads", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p-{plate}
          matrix: { plate: [1, 2] }
          steps:
            - id: s
              shell: true
              run: >
                segment
                --well {wel}
            - id: t
              run: [x, "folded
                and {aa}", "\\x7Bbb}", "a\\
                {cc}"]
    `);
    const at = (name: string) => {
      const found = withCode(loaded.problems, "unknown-matrix-variable").find((p) =>
        p.message.startsWith(`\`{${name}}\``),
      );
      return [found?.line, found?.column];
    };
    expect(at("wel")).toEqual([8, 14]);
    expect(at("aa")).toEqual([12, 18]);
    expect(at("bb")).toEqual([13, 22]);
    expect(at("cc")).toEqual([13, 33]);
  });

  it("points at the placeholder when the file is located through the YAML document too", () => {
    // A directive makes the streaming scanner decline: the document answers instead.
    const loaded = check(yaml`
      %YAML 1.2
      ---
      version: 1
      pipelines:
        - name: p-{plate}
          matrix: { plate: [1, 2] }
          steps:
            - { id: s, run: [x, "--well {wel}"] }
    `);
    const p = one(loaded.problems, "unknown-matrix-variable");
    expect([p.line, p.column]).toEqual([8, 35]);
  });

  it("locates 40,000 unknown placeholders in one string quickly, each at its own", () => {
    const started = performance.now();
    const loaded = check(
      `version: 1\npipelines:\n  - name: p\n    steps:\n      - id: s\n        run: [x, "${"{a}".repeat(40_000)}"]\n`,
    );
    const found = withCode(loaded.problems, "unknown-matrix-variable");
    expect(found).toHaveLength(40_000);
    expect(new Set(found.map((p) => p.column)).size).toBe(40_000);
    expect(found.at(-1)!.column).toBe(19 + 3 * 39_999);
    // Walking the string once per placeholder (and chaining them all at one pointer) took ~40 s.
    expect(performance.now() - started).toBeLessThan(4000);
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
