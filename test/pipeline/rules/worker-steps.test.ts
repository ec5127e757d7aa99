import { describe, expect, it } from "vitest";
import { check, one, step, withCode, yaml } from "../../helpers/pipeline.js";

const workerFile = (worker: string, extra = "") => yaml`
  version: 1
  pipelines:
    - name: p
      steps:
        - id: seg
          memory: torch
          vram: 4GiB
          worker: ${worker}
          ${extra}
`;

describe("rule: worker steps", () => {
  it("resolves a worker step without run: key defaults to the step id, kept warm 15m, ready in 2m", () => {
    const loaded = check(workerFile("{ run: [python3, w.py] }"));
    expect(loaded.problems).toEqual([]);
    const s = step(loaded, "seg");
    expect(s.argv).toEqual(["python3", "w.py"]);
    expect(s.worker).toEqual({ argv: ["python3", "w.py"], key: "seg", readyTimeoutMs: 120_000, args: [] });
    expect(s.keepWarm).toEqual({ ttlMs: 15 * 60_000 });
  });

  it("sends the step's own run words as task args, and honours keep_warm: false", () => {
    const loaded = check(
      workerFile(
        "{ run: [node, w.mjs], key: cyto3, ready_timeout: 30s }",
        "run: [--diameter, 30]\n          keep_warm: false",
      ),
    );
    expect(loaded.problems).toEqual([]);
    const s = step(loaded, "seg");
    expect(s.argv).toEqual(["--diameter", "30"]);
    expect(s.worker).toEqual({
      argv: ["node", "w.mjs"],
      key: "cyto3",
      readyTimeoutMs: 30_000,
      args: ["--diameter", "30"],
    });
    expect(s.keepWarm).toBe(false);
  });

  it("still needs run on a step without a worker", () => {
    const loaded = check(yaml`
      version: 1
      pipelines: [{ name: p, steps: [{ id: a }] }]
    `);
    expect(withCode(loaded.problems, "schema-missing-property")).toHaveLength(1);
  });

  it("rejects a key with odd characters and a zero ready_timeout", () => {
    const loaded = check(workerFile('{ run: [w], key: "a b", ready_timeout: 0 }'));
    expect(one(loaded.problems, "worker-key-format").pointer).toBe("/pipelines/0/steps/0/worker/key");
    expect(one(loaded.problems, "worker-ready-timeout-zero").severity).toBe("error");
  });

  it("rejects a matrix placeholder in a key, saying keys are not substituted", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p-{plate}
          matrix: { plate: [1, 2] }
          steps:
            - { id: a, memory: torch, vram: 1GiB, run: ["{plate}"], worker: { run: [w], key: "m{plate}" } }
    `);
    const problem = one(loaded.problems, "worker-key-format");
    expect(problem.pointer).toBe("/pipelines/0/steps/0/worker/key");
    expect(problem.hint).toContain("not matrix-substituted");
  });

  it("rejects a matrix placeholder in the worker's own command, at the placeholder", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p-{plate}
          matrix: { plate: [1, 2] }
          steps:
            - id: a
              memory: torch
              vram: 1GiB
              run: ["{plate}"]
              worker: { run: [w, "--plate={plate}", "{other}", "{{plate}}"], key: m }
    `);
    const problem = one(loaded.problems, "worker-command-placeholder");
    expect(problem.severity).toBe("error");
    expect(problem.message).toContain("`{plate}`");
    expect(problem.hint).toContain("not matrix-substituted");
    expect(problem.pointer).toBe("/pipelines/0/steps/0/worker/run/1");
    expect([problem.line, problem.column]).toEqual([10, 37]); // at `{plate}` in `--plate={plate}`
  });

  it("rejects one key naming two commands", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, memory: torch, vram: 1GiB, worker: { run: [w1], key: m } }
            - { id: b, memory: torch, vram: 1GiB, worker: { run: [w2], key: m } }
    `);
    expect(one(loaded.problems, "worker-key-conflict").message).toContain("`a`");
  });

  it("warns that an exclusive worker step is not kept warm", () => {
    const loaded = check(workerFile("{ run: [w] }", "exclusive: true\n          keep_warm: { ttl: 5m }"));
    expect(one(loaded.problems, "exclusive-worker-not-warm").severity).toBe("warning");
  });
});
