// compile never puts a pipeline on several GPUs on a MIG instance (a CUDA process can use only one
// MIG instance); a hand-edited plan that does is refused, at the pipeline's gpus entry.
import { describe, expect, it } from "vitest";
import { planInvariantProblems } from "../../src/plan/plan-invariants.js";
import { compileText, migInventory } from "../helpers/inventory.js";
import { yaml } from "../helpers/pipeline.js";

const twoShards = yaml`
  version: 1
  pipelines:
    - name: shard-{n}
      matrix: { n: [1, 2] }
      steps: [{ id: s, run: [x], memory: torch, vram: 10GiB }]
`;

describe("plan invariants and MIG instances", () => {
  it("refuses a pipeline on several GPUs that names a MIG instance", () => {
    const plan = compileText(twoShards, migInventory()).plan!;
    expect(planInvariantProblems(plan, "plan.json")).toEqual([]);
    plan.pipelines[0]!.gpus = ["cuda:0/mig1", "cuda:0/mig2"];
    const problems = planInvariantProblems(plan, "plan.json");
    expect(problems.map((p) => [p.code, p.pointer])).toEqual([
      ["plan-inconsistent", "/pipelines/0/gpus/0"],
      ["plan-inconsistent", "/pipelines/0/gpus/1"],
    ]);
    expect(problems[0]!.message).toContain(
      "cuda:0/mig1 is a MIG instance: a CUDA process can use only one MIG instance",
    );
  });

  it("accepts a pipeline on one MIG instance, and one on several GPUs without MIG", () => {
    const plan = compileText(twoShards, migInventory()).plan!;
    plan.pipelines[0]!.gpus = ["cuda:0/mig1"];
    plan.pipelines[1]!.gpus = ["cuda:1"];
    expect(planInvariantProblems(plan, "plan.json")).toEqual([]);
  });
});
