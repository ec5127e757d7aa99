// The on_oom ladder in the pipeline file: rungs as the plan carries them, retries and fallback
// counted from them; `cpu` only last; a ladder beside retries or fallback is one located problem.
import { describe, expect, it } from "vitest";
import { check, one, step, yaml } from "../helpers/pipeline.js";

describe("on_oom ladder", () => {
  it("resolves each rung, with retries counting the GPU rungs and fallback cpu when it ends there", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - id: s
              run: [x]
              memory: torch
              vram: 1GiB
              on_oom: { ladder: [wait, { wait: 30s }, exclusive, other-gpu, smaller, { smaller: 0.25 }, retry, cpu] }
    `);
    expect(loaded.problems).toEqual([]);
    expect(step(loaded, "s").onOom).toEqual({
      retries: 7,
      fallback: "cpu",
      ladder: [
        { kind: "wait" },
        { kind: "wait", waitMs: 30_000 },
        { kind: "exclusive" },
        { kind: "other-gpu" },
        { kind: "smaller" },
        { kind: "smaller", scale: 0.25 },
        { kind: "retry" },
        { kind: "cpu" },
      ],
    });
  });

  it("the short form has no ladder in the plan (old plans stay as they were)", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: s, run: [x], memory: torch, vram: 1GiB, on_oom: { retries: 2 } }
    `);
    expect(step(loaded, "s").onOom).toEqual({ retries: 2, fallback: null });
  });

  it("a rung after cpu is an error at that rung", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: s, run: [x], memory: torch, vram: 1GiB, on_oom: { ladder: [wait, cpu, smaller] } }
    `);
    const p = one(loaded.problems, "oom-ladder-order");
    expect(p.pointer).toBe("/pipelines/0/steps/0/on_oom/ladder/1");
    expect(p.message).toContain("smaller would never run on a GPU");
  });

  it("a ladder beside retries is one problem at `retries`, saying the ladder replaces it", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: s, run: [x], memory: torch, vram: 1GiB, on_oom: { retries: 1, ladder: [cpu] } }
    `);
    expect(loaded.problems).toHaveLength(1);
    expect(loaded.problems[0]).toMatchObject({
      code: "schema-invalid-value",
      pointer: "/pipelines/0/steps/0/on_oom/retries",
      hint: expect.stringContaining("ladder replaces `retries` and `fallback`"),
    });
  });
});
