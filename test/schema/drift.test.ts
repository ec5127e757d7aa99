// The schemas are the source of truth: the committed types, the examples and the reference's
// problem-code table must follow them and the code.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { generateTypes } from "../../scripts/generate-types.mjs";
import { SCHEMAS } from "../../scripts/schemas.mjs";
import { compilePlan } from "../../src/compile/compile.js";
import validatePlan from "../../src/generated/plan-validator.js";
import { targetInventory } from "../../src/inventory/load-inventory.js";
import { checkPipelineText } from "../../src/pipeline/load-pipeline.js";
import { planDocument } from "../../src/plan/plan-text.js";
import { CODES } from "../../src/problems/codes.js";

const root = join(import.meta.dirname, "../..");
const read = (p: string) => readFileSync(join(root, p), "utf8");

describe("schema drift", () => {
  it.each(SCHEMAS)("src types match $file", async ({ name, file, types }) => {
    expect(read(types), `run npm run generate:types`).toBe(await generateTypes(name, file));
  });

  it.each(["examples/cell-painting.yaml", "examples/diffusion-inference.yaml", "examples/jax-training.yaml"])(
    "%s compiles without problems against dgx-a100-80gb and dgx-h100, and the plan matches its schema",
    (example) => {
      for (const target of ["dgx-a100-80gb", "dgx-h100"]) {
        const result = compilePlan(checkPipelineText(example, read(example)), targetInventory(target));
        expect(result.problems, `${example} on ${target}`).toEqual([]);
        expect(validatePlan(result.plan), JSON.stringify(validatePlan.errors)).toBe(true);
      }
    },
  );

  it("the problem-code reference lists every code of the registry, failures included, and no others", () => {
    // docs/reference/problem-codes.md is generated from the registry (npm run docs) and checked
    // for staleness in test/docs/reference.test.ts; this reads the committed page itself.
    const page = read("docs/reference/problem-codes.md");
    const documented = new Set([...page.matchAll(/^### ([a-z0-9-]+)$/gm)].map((m) => m[1]!));
    expect(documented.size).toBeGreaterThan(30);
    expect([...documented].sort()).toEqual(Object.keys(CODES).sort());
  });

  it("CI runs the test command the README gives a new user", () => {
    expect(read("README.md")).toMatch(/^npm test$/m);
    expect(read(".ci/run")).toMatch(/^npm ci\b/m);
    expect(read(".ci/run")).toMatch(/^npm test$/m);
  });
});

describe("compile --format json report", () => {
  it("matches schemas/compile-report.schema.json, with and without problems", async () => {
    const { formatJson } = await import("../../src/ui/problems/json.js");
    const { default: validateReport } = await import("../../src/generated/compile-report-validator.js");
    const good = compilePlan(
      checkPipelineText("examples/jax-training.yaml", read("examples/jax-training.yaml")),
      targetInventory("dgx-h100"),
    );
    const bad = compilePlan(
      checkPipelineText("examples/jax-training.yaml", read("examples/jax-training.yaml")),
      targetInventory("cpu-only"),
    );
    expect(bad.problems.length).toBeGreaterThan(0);
    for (const [result, ok] of [
      [good, true],
      [bad, false],
    ] as const) {
      const text = formatJson({
        ok,
        problems: result.problems,
        output: null,
        check: null,
        plan: result.plan ? planDocument(result.plan) : null,
      });
      const report = JSON.parse(text);
      expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
      expect(report.ok).toBe(ok);
    }
  });
});

describe("gpuplan locks --json", () => {
  it("matches schemas/locks.schema.json with a held slot", async () => {
    const { mkdtempSync, rmSync } = await import("node:fs");
    const { tmpdir } = await import("node:os");
    const { default: validateLocks } = await import("../../src/generated/locks-validator.js");
    const { createSlotLock } = await import("../../src/run/lock/index.js");
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-locks-schema-"));
    try {
      const lock = createSlotLock({ dir });
      const lease = await lock.acquire({
        uuid: "GPU-00000000-0000-0000-0000-000000000001",
        gpu: "cuda:0",
        maxPipelines: 2,
        holder: { pid: process.pid, run: "r1", pipeline: "p", step: "s", since: new Date(0).toISOString() },
        wait: false,
      });
      const report = {
        schema: "gpuplan/locks@2",
        dir,
        mode: "private",
        gpus: await lock.inspectGpus(),
        workers: [],
      };
      lease.release();
      expect(report.gpus[0]!.slots.some((s) => s.held)).toBe(true);
      expect(validateLocks(report), JSON.stringify(validateLocks.errors)).toBe(true);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
