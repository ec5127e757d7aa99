import { describe, expect, it } from "vitest";
import { check, one, withCode, yaml } from "../helpers/pipeline.js";

describe("worker keys whose steps start the worker differently", () => {
  it("warns once, at the env value, when a matrix value in a worker step's env restarts it per plate", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: plate-{plate}
          matrix: { plate: [1, 2, 3] }
          steps:
            - id: seg
              memory: torch
              vram: 4GiB
              env: { PLATE: "{plate}" }
              worker: { run: [python3, w.py] }
    `);
    const p = one(loaded.problems, "worker-launch-differs");
    expect(p.severity).toBe("warning");
    expect(p.pointer).toBe("/pipelines/0/steps/0/env/PLATE");
    expect(p.line).toBe(9);
    expect(p.message).toContain(
      "env `PLATE` in step `seg` of pipeline `plate-2` than in step `seg` of pipeline `plate-1`",
    );
    expect(p.message).toContain("3 different launches");
    expect(p.hint).toContain("args.matrix");
    expect(loaded.problems.filter((x) => x.severity === "error")).toEqual([]);
  });

  it("warns across pipelines for a different cwd or command under one key", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: a
          steps: [{ id: seg, memory: torch, vram: 4GiB, worker: { run: [w], key: m } }]
        - name: b
          steps: [{ id: seg, memory: torch, vram: 4GiB, cwd: sub, worker: { run: [w], key: m } }]
        - name: c
          steps: [{ id: seg, memory: torch, vram: 4GiB, worker: { run: [w2], key: m } }]
    `);
    const found = withCode(loaded.problems, "worker-launch-differs");
    expect(found.map((p) => p.pointer)).toEqual([
      "/pipelines/1/steps/0/cwd",
      "/pipelines/2/steps/0/worker/run",
    ]);
    expect(found[0]!.message).toContain("another `cwd` in step `seg` of pipeline `b`");
    expect(found[1]!.message).toContain("another command");
  });

  it("says nothing when steps share a launch (cwd `.` is no cwd), or use their own keys", () => {
    const loaded = check(yaml`
      version: 1
      defaults: { env: { MODEL: cyto3.pt } }
      pipelines:
        - name: plate-{plate}
          matrix: { plate: [1, 2] }
          steps:
            - { id: seg, memory: torch, vram: 4GiB, run: ["--plate", "{plate}"], worker: { run: [w] } }
        - name: other
          steps: [{ id: seg, memory: torch, vram: 4GiB, cwd: ".", worker: { run: [w] } }]
        - name: small
          steps: [{ id: s, memory: torch, vram: 4GiB, env: { MODEL: small.pt }, worker: { run: [w], key: small } }]
        - name: large
          steps: [{ id: s, memory: torch, vram: 4GiB, env: { MODEL: large.pt }, worker: { run: [w], key: large } }]
    `);
    expect(withCode(loaded.problems, "worker-launch-differs")).toEqual([]);
  });

  it("leaves two commands in one pipeline entry to the error", () => {
    const loaded = check(yaml`
      version: 1
      pipelines:
        - name: p
          steps:
            - { id: a, memory: torch, vram: 4GiB, worker: { run: [w1], key: m } }
            - { id: b, memory: torch, vram: 4GiB, worker: { run: [w2], key: m } }
    `);
    expect(one(loaded.problems, "worker-key-conflict").severity).toBe("error");
    expect(withCode(loaded.problems, "worker-launch-differs")).toEqual([]);
  });
});
