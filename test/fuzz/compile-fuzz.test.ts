/**
 * Random mutations of the examples never crash compile: the exit code is 0, 1 or 2, there is no
 * "internal error" or stack trace, and every problem has a code, a message and — when it comes
 * from the pipeline file — a line and column. Many cases run in process (the same core the CLI
 * calls), a bounded number through the real CLI.
 */
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { compilePlan } from "../../src/compile/compile.js";
import validatePlan from "../../src/generated/plan-validator.js";
import { targetInventory } from "../../src/inventory/load-inventory.js";
import { checkPipelineText } from "../../src/pipeline/load-pipeline.js";
import { fillDefaults } from "../../src/plan/plan-defaults.js";
import type { Problem } from "../../src/problems/problem.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";
import { applyAll, type Mutation, mutations } from "./mutations.js";

const EXAMPLES = ["cell-painting", "diffusion-inference", "jax-training"].map((n) =>
  readFileSync(`examples/${n}.yaml`, "utf8"),
);
const TARGETS = ["dgx-h100", "rtx4090", "mi300x-8", "cpu-only"];
const FILE = "fuzz.yaml";

const input = fc.record({
  example: fc.nat({ max: EXAMPLES.length - 1 }),
  target: fc.constantFrom(...TARGETS),
  mutations,
});
const describeCase = (c: { example: number; target: string; mutations: Mutation[] }) =>
  `example ${c.example} on ${c.target}: ${c.mutations.map((m) => m.describe).join("; ")}`;

function checkProblem(p: Problem | (Omit<Problem, "severity"> & { severity: string }), file: string): void {
  expect(p.code).toMatch(/^[a-z0-9]+(-[a-z0-9]+)*$/);
  expect(typeof p.message).toBe("string");
  expect(p.message.length).toBeGreaterThan(0);
  expect(["error", "warning"]).toContain(p.severity);
  if (p.file === file) {
    expect(p.line, `${p.code} without a line`).toBeGreaterThan(0);
    expect(p.column, `${p.code} without a column`).toBeGreaterThan(0);
  }
}

describe("compile fuzz", () => {
  it("in process: never throws, locates every problem, and every plan is valid", () => {
    fc.assert(
      fc.property(input, (c) => {
        const text = applyAll(EXAMPLES[c.example]!, c.mutations);
        let result: ReturnType<typeof compilePlan>;
        try {
          result = compilePlan(checkPipelineText(FILE, text), targetInventory(c.target));
        } catch (e) {
          throw new Error(`${describeCase(c)}\n--- text ---\n${text}\n--- threw ---\n${(e as Error).stack}`);
        }
        for (const p of result.problems) checkProblem(p, FILE);
        const hasError = result.problems.some((p) => p.severity === "error");
        expect(result.plan === undefined).toBe(hasError);
        if (result.plan) {
          expect(validatePlan(result.plan), JSON.stringify(validatePlan.errors)).toBe(true);
          // The plan text is the plan, with DEL and C1 controls written as \u escapes (json-text.ts).
          expect(fillDefaults(JSON.parse(result.planText!))).toEqual(result.plan);
          expect(result.planText).not.toMatch(/[\u007f-\u009f]/);
          expect(result.planText!.endsWith("}\n")).toBe(true);
        }
      }),
      { numRuns: 600 },
    );
  });

  const tmp = tempDir();
  afterAll(() => tmp.cleanup());

  // Each case starts a real process; on two shared cores next to the rest of the suite that can
  // take far longer than the default timeout, so this test gets its own.
  it("through the CLI: exit 0/1/2, no stack trace, located problems", { timeout: 300_000 }, () => {
    let n = 0;
    fc.assert(
      fc.property(input, fc.constantFrom("json", "human", "github"), (c, format) => {
        const file = join(tmp.dir, `case-${n++}.yaml`);
        writeFileSync(file, applyAll(EXAMPLES[c.example]!, c.mutations));
        const r = gpuplan(["compile", file, "--target", c.target, "--format", format]);
        const where = `${describeCase(c)} --format ${format}\n${r.stderr}`;
        expect([0, 1, 2], where).toContain(r.exitCode);
        expect(hasCrashed(r), where).toBe(false);
        if (format === "json") {
          const report = JSON.parse(r.stdout) as { ok: boolean; problems: Problem[] };
          expect(report.ok).toBe(r.exitCode === 0);
          for (const p of report.problems) checkProblem(p, file);
        } else if (format === "github") {
          for (const line of r.stdout.split("\n").filter(Boolean)) {
            expect(line).toMatch(
              /^::(error|warning) (file=[^,]+,line=\d+,col=\d+,)?title=gpuplan [a-z0-9-]+::./,
            );
          }
        } else if (r.exitCode === 1) {
          expect(r.stderr).toMatch(/\d+ errors?, \d+ warnings?; no plan written/);
        }
      }),
      { numRuns: 40 },
    );
  });
});
