// Plan format 2 leaves out what a reader would assume (the schema's defaults and x-defaults) and
// the reader puts it back: every plan compile writes reads back as the very plan compile made,
// field for field and in the same key order, whatever its steps set.
import { readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { compilePlan } from "../../src/compile/compile.js";
import validatePlan from "../../src/generated/plan-validator.js";
import { targetInventory } from "../../src/inventory/load-inventory.js";
import { checkPipelineText } from "../../src/pipeline/load-pipeline.js";
import { DERIVED_FIELDS, fillDefaults } from "../../src/plan/plan-defaults.js";
import { planText } from "../../src/plan/plan-text.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import { compileText, inventory } from "../helpers/inventory.js";
import { yaml } from "../helpers/pipeline.js";

const ROOT = join(import.meta.dirname, "../..");
type Json = Record<string, unknown>;
const schema = JSON.parse(readFileSync(join(ROOT, "schemas/plan.schema.json"), "utf8")) as {
  $defs: Record<string, { properties: Record<string, Json> }>;
};

/** What a reader of the file gets: parse, check against the schema, fill the defaults back. */
function readBack(text: string): GpuplanPlan {
  const data: unknown = JSON.parse(text);
  expect(validatePlan(data), JSON.stringify(validatePlan.errors)).toBe(true);
  return fillDefaults(data as GpuplanPlan);
}

function roundTrip(plan: GpuplanPlan | undefined): { text: string; full: string } {
  expect(plan).toBeDefined();
  const text = planText(plan!);
  const back = readBack(text);
  // JSON text equality: the same fields, values and key order.
  expect(JSON.stringify(back)).toBe(JSON.stringify(plan));
  return { text, full: JSON.stringify(plan, null, 2) };
}

/** Steps that set every field a default could stand for, to something else. */
const EVERYTHING = yaml`
  version: 1
  name: everything
  pipelines:
    - name: shard-{n}
      matrix: { n: [a, b] }
      gpus: 2
      steps:
        - id: prep
          run: "echo prep {n} | tee out.txt"
          shell: true
          cwd: steps
          env: { MODE: fast }
          memory: numpy
          data: 1GiB
          timeout: 5m
        - id: train
          run: [python3, train.py]
          memory: { input: numpy, output: torch }
          uses: [cupy]
          vram: 20GiB
          needs: [prep]
          exclusive: true
          on_oom: { ladder: [retry, { smaller: 0.5 }, { wait: 30s }, cpu] }
        - id: eval
          run: [python3, eval.py]
          memory: torch
          keep_warm: { ttl: 5m }
          on_oom: { retries: 2, fallback: cpu }
    - name: host-only
      steps:
        - { id: a, run: [echo, a], memory: numpy }
        - { id: b, run: [echo, b], memory: cupy, needs: [a], on_oom: { fallback: cpu } }
`;

describe("plan format 2: defaults left out and filled back", () => {
  it("the schema's x-default fields are the ones the code derives, no more, no fewer", () => {
    for (const [def, fields] of Object.entries(DERIVED_FIELDS)) {
      const inSchema = Object.entries(schema.$defs[def]!.properties)
        .filter(([, p]) => "x-default" in p)
        .map(([k]) => k);
      expect([...fields].sort(), def).toEqual(inSchema.sort());
    }
  });

  it.each([
    "examples/cell-painting.yaml",
    "examples/diffusion-inference.yaml",
    "examples/jax-training.yaml",
    "examples/warm-workers.yaml",
    "examples/hello-cpu.yaml",
  ])("%s reads back as compiled on every kind of target, in well under half the bytes", (example) => {
    for (const target of ["dgx-h100", "rtx4090", "mi300x-8", "cpu-only"]) {
      const loaded = checkPipelineText(example, readFileSync(join(ROOT, example), "utf8"));
      const result = compilePlan(loaded, targetInventory(target));
      if (!result.plan) continue; // A GPU pipeline with no fallback does not compile for cpu-only.
      const { text, full } = roundTrip(result.plan);
      expect(text.length, `${example} on ${target}`).toBeLessThan(full.length * 0.6);
    }
  });

  it("steps that set every field to something else keep it: shell, cwd, env, uses, ladder, warm, exclusive, 2 GPUs, the CPU", () => {
    for (const inv of [
      inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count: 4 }]),
      "cpu-only",
    ]) {
      const result = compileText(EVERYTHING, inv);
      expect(result.problems.filter((p) => p.severity === "error")).toEqual([]);
      const { text } = roundTrip(result.plan);
      const steps = (JSON.parse(text) as { pipelines: { steps: Json[] }[] }).pipelines.flatMap(
        (p) => p.steps,
      );
      const prep = steps.find((s) => s.id === "prep")!;
      expect(prep).toMatchObject({ shell: true, cwd: "steps", env: { MODE: "fast" }, timeoutMs: 300000 });
    }
    // On the GPUs: the exclusive step's budget is the GPU's, not its pipeline's reservation, and is written.
    const plan = compileText(
      EVERYTHING,
      inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count: 4 }]),
    ).plan!;
    const train = plan.pipelines[0]!.steps[1]!;
    expect(train.memoryBudgetBytes).not.toBe(plan.pipelines[0]!.reservationBytes);
    expect(readBack(planText(plan)).pipelines[0]!.steps[1]!.memoryBudgetBytes).toBe(train.memoryBudgetBytes);
  });

  it("an exclusive step on cards of different sizes: its budget is the least of theirs, left out and read back", () => {
    const mixed = inventory([
      { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" },
      { name: "NVIDIA L4", memory: "24GiB" },
    ]);
    const plan = compileText(EVERYTHING.replace("vram: 20GiB", "vram: 2GiB"), mixed).plan!;
    const train = plan.pipelines[0]!.steps[1]!;
    const l4 = plan.registry.find((e) => e.name === "NVIDIA L4")!;
    expect(plan.pipelines[0]!.gpus).toContain(l4.gpu);
    expect(train.memoryBudgetBytes).toBe(l4.memoryBudgetBytes);
    const { text } = roundTrip(plan);
    const written = (JSON.parse(text) as { pipelines: { steps: Json[] }[] }).pipelines[0]!.steps[1]!;
    expect(written).not.toHaveProperty("memoryBudgetBytes");
  });

  it("a value that differs from what the reader would derive is written (a hand-bound UUID, a moved step)", () => {
    const plan = compileText(
      EVERYTHING,
      inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB", count: 4 }]),
    ).plan!;
    const step = plan.pipelines[0]!.steps[2]!;
    step.uuid = "GPU-00000000-0000-0000-0000-000000000000";
    plan.pipelines[0]!.steps[0]!.source = "elsewhere.yaml#/pipelines/7/steps/0";
    plan.pipelines[1]!.template = "renamed";
    const text = planText(plan);
    expect(text).toContain('"uuid": "GPU-00000000-0000-0000-0000-000000000000"');
    expect(text).toContain('"source": "elsewhere.yaml#/pipelines/7/steps/0"');
    expect(JSON.stringify(readBack(text))).toBe(JSON.stringify(plan));
  });

  it("what the reader fills in is a fresh object each time: changing one step's env leaves the others'", () => {
    const back = readBack(planText(compileText(EVERYTHING, "cpu-only").plan!));
    const [a, b] = back.pipelines.find((p) => p.name === "host-only")!.steps;
    a!.env.X = "1";
    a!.memory.uses.push("torch");
    expect(b!.env).toEqual({});
    expect(b!.memory.uses).toEqual([]);
  });
});
