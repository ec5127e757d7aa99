import { describe, expect, it } from "vitest";
import { check, one, step, yaml } from "../../helpers/pipeline.js";

describe("rule: run command", () => {
  it("rejects a run string without shell and suggests the argv form", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: go
              run: python3 go.py --fast
    `);
    const p = one(loaded.problems, "run-string-without-shell");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("step `go`");
    expect(p.hint).toContain('run: ["python3", "go.py", "--fast"]');
    expect(p.pointer).toBe("/pipelines/0/steps/0/run");
    expect([p.line, p.column]).toEqual([6, 14]);
  });

  it("accepts a string with shell: true on the step or in defaults", () => {
    for (const where of ["step", "defaults"]) {
      const loaded = check(yaml`
        version: 1
        ${where === "defaults" ? "defaults: { shell: true }" : ""}
        pipelines:
          - name: p
            steps:
              - id: go
                run: "python3 go.py | tee log"
                ${where === "step" ? "shell: true" : ""}
      `);
      expect(loaded.problems, where).toEqual([]);
      expect(step(loaded, "go").shell).toBe(true);
      expect(step(loaded, "go").argv).toEqual(["python3 go.py | tee log"]);
    }
  });

  it("rejects shell: true with an argv list of several words", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: go, run: [python3, go.py], shell: true }
    `);
    const p = one(loaded.problems, "shell-with-argv");
    expect(p.severity).toBe("error");
    expect(p.message).toContain("2 words");
    expect(p.pointer).toBe("/pipelines/0/steps/0/run");
  });

  it("accepts an argv list and stringifies numbers", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: go, run: [python3, go.py, --n, 4] }
    `);
    expect(loaded.problems).toEqual([]);
    expect(step(loaded, "go").argv).toEqual(["python3", "go.py", "--n", "4"]);
    expect(step(loaded, "go").shell).toBe(false);
  });
});
