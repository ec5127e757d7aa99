import { describe, expect, it } from "vitest";
import { check, one, step, withCode, yaml } from "../../helpers/pipeline.js";

const file = (needsB: string) => yaml`
  version: 1
  pipelines:
    - name: p
      steps:
        - id: load
          run: [a]
        - id: segment
          run: [b]
          needs: ${needsB}
`;

describe("rule: needs graph", () => {
  it("reports an unknown need with a did-you-mean, at the entry", () => {
    const loaded = check(file("[laod]"));
    const p = one(loaded.problems, "unknown-need");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`laod`");
    expect(p.message).toContain("pipeline `p`");
    expect(p.hint).toBe("did you mean `load`?");
    expect(p.pointer).toBe("/pipelines/0/steps/1/needs/0");
    expect([p.line, p.column]).toEqual([9, 17]);
  });

  it("lists the steps when nothing is close", () => {
    const p = one(check(file("[zzzzzzzz]")).problems, "unknown-need");
    expect(p.hint).toBe("steps: load, segment");
  });

  it("reports a step that needs itself", () => {
    const p = one(check(file("[segment]")).problems, "needs-self");
    expect(p.severity).toBe("error");
    expect(p.message).toBe("step `segment` needs itself");
    expect(p.pointer).toBe("/pipelines/0/steps/1/needs/0");
  });

  it("reports a cycle once, naming the steps in order", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: load, run: [a], needs: [segment] }
            - { id: segment, run: [b], needs: [load] }
    `);
    const p = one(loaded.problems, "needs-cycle");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("load → segment → load");
    expect(p.pointer).toBe("/pipelines/0/steps/0/needs");
    expect(withCode(loaded.problems, "unknown-need")).toEqual([]);
  });

  it("accepts a DAG, and a step without needs follows the one before it", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [a] }
            - { id: b, run: [b] }
            - { id: c, run: [c], needs: [a] }
            - { id: d, run: [d], needs: [b, c] }
    `);
    expect(loaded.problems).toEqual([]);
    expect(step(loaded, "a").needs).toEqual([]);
    expect(step(loaded, "b").needs).toEqual(["a"]);
    expect(step(loaded, "c").needs).toEqual(["a"]);
    expect(step(loaded, "d").needs).toEqual(["b", "c"]);
  });

  it("lets a step opt out of the implicit edge with needs: []", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, run: [a] }
            - { id: b, run: [b], needs: [] }
    `);
    expect(step(loaded, "b").needs).toEqual([]);
  });
});
