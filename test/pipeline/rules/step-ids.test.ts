import { describe, expect, it } from "vitest";
import { check, one, withCode, yaml } from "../../helpers/pipeline.js";

describe("rule: unique step ids", () => {
  it("reports the second use of an id, at its value", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: load
              run: [a]
            - id: load
              run: [b]
    `);
    const p = one(loaded.problems, "duplicate-step-id");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("`load`");
    expect(p.message).toContain("pipeline `p`");
    expect(p.pointer).toBe("/pipelines/0/steps/1/id");
    expect([p.line, p.column]).toEqual([7, 13]);
  });

  it("is quiet when ids are unique, and ids may repeat across pipelines", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: a
          steps: [{ id: load, run: [x] }, { id: save, run: [y] }]
        - name: b
          steps: [{ id: load, run: [x] }]
    `);
    expect(withCode(loaded.problems, "duplicate-step-id")).toEqual([]);
    expect(loaded.problems).toEqual([]);
  });
});
