/**
 * A step whose one argument or environment string is longer than Linux passes to a program
 * (MAX_ARG_STRLEN) can never start: compile refuses it at the key it comes from.
 */
import { spawnSync } from "node:child_process";
import { describe, expect, it } from "vitest";
import { MAX_ARGUMENT_BYTES } from "../../src/pipeline/argument-sizes.js";
import { check, one, withCode } from "../helpers/pipeline.js";

const long = "x".repeat(140_000);

describe("the limit", () => {
  // The constant is the kernel's: a string of MAX_ARGUMENT_BYTES bytes starts a program, one
  // byte more does not (E2BIG), here as on every Linux.
  it.runIf(process.platform === "linux")("is what Linux passes to a program, to the byte", () => {
    const start = (bytes: number) =>
      spawnSync("/bin/sh", ["-c", "exit 0"], { env: { X: "a".repeat(bytes - "X=".length) } });
    expect(start(MAX_ARGUMENT_BYTES).status).toBe(0);
    expect((start(MAX_ARGUMENT_BYTES + 1).error as NodeJS.ErrnoException | undefined)?.code).toBe("E2BIG");
  });
});

describe("compile refuses a step that could never start", () => {
  it("a pipeline name made long by its matrix: one error at the name, not one per expansion", () => {
    const loaded = check(`version: 1
pipelines:
  - name: p-{v}
    matrix: { v: [a${long}, b${long}] }
    steps: [{ id: s, run: [echo] }]
`);
    const p = one(loaded.problems, "argument-too-long");
    expect(p).toMatchObject({ severity: "error", pointer: "/pipelines/0/name", line: 3 });
    expect(p.message).toContain("140,020-byte");
    expect(p.message.length).toBeLessThan(300);
  });

  it("a run word, a shell command's words together, an env value, a worker's command", () => {
    const words = Array.from({ length: 20 }, () => "y".repeat(7_000)).join(", ");
    const loaded = check(`version: 1
pipelines:
  - name: p
    steps:
      - { id: word, run: [echo, ${long}] }
      - { id: joined, run: [${words}], shell: true }
      - { id: apart, run: [${words}] }
      - { id: env, run: [echo], env: { LONG: ${long} } }
      - { id: worker, worker: { run: [python3, ${long}] }, memory: torch, vram: 1GiB }
`);
    expect(withCode(loaded.problems, "argument-too-long").map((p) => p.pointer)).toEqual([
      "/pipelines/0/steps/0/run",
      "/pipelines/0/steps/1/run",
      "/pipelines/0/steps/3/env/LONG",
      "/pipelines/0/steps/4/worker/run",
    ]);
  });

  it("counts bytes, not characters: 70,000 é is 140,000 bytes, 60,000 is 120,000", () => {
    const loaded = check(`version: 1
pipelines:
  - name: p
    steps:
      - { id: over, run: [echo, ${"é".repeat(70_000)}] }
      - { id: under, run: [echo, ${"é".repeat(60_000)}] }
`);
    expect(one(loaded.problems, "argument-too-long").pointer).toBe("/pipelines/0/steps/0/run");
  });

  it("warns when a step's own strings come to more than 1 MiB together", () => {
    const env = Array.from({ length: 10 }, (_, i) => `V${i}: ${"z".repeat(120_000)}`).join(", ");
    const loaded = check(`version: 1
pipelines:
  - name: p
    steps: [{ id: s, run: [echo], env: { ${env} } }]
`);
    expect(withCode(loaded.problems, "argument-too-long")).toEqual([]);
    expect(one(loaded.problems, "arguments-too-large")).toMatchObject({
      severity: "warning",
      pointer: "/pipelines/0/steps/0/run",
    });
  });
});
