/** A plan on two different GPUs (an A100 and an L4) with a pipeline too big for one, an exclusive step, small pipelines and a CPU one. */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { compilePlan } from "../../../src/compile/compile.js";
import { loadInventoryFile } from "../../../src/inventory/load-inventory.js";
import { loadPipelineFile } from "../../../src/pipeline/load-pipeline.js";

const MIXED_INVENTORY = `
gpus:
  - { name: NVIDIA A100-SXM4-80GB, memory: 80GiB, compute_capability: "8.0" }
  - { name: NVIDIA L4, memory: 24GiB, compute_capability: "8.9" }
cpu: { threads: 8, memory: 64GiB }
`;

const MIXED_PIPELINE = `
version: 1
name: mixed
registry: { max_pipelines_per_gpu: 3, max_parallel_pipelines: 8 }
pipelines:
  - name: big
    steps:
      - { id: train, run: [x], memory: torch, vram: 30GiB, estimate: 10m }
      - { id: evaluate, run: [x], memory: torch, vram: 30GiB, estimate: 2m, needs: [train], exclusive: true }
  - name: small-{n}
    matrix: { n: [1, 2, 3, 4] }
    steps:
      - { id: load, run: [x, "{n}"], memory: numpy, estimate: 1m }
      - { id: infer, run: [x, "{n}"], memory: torch, vram: 4GiB, estimate: 3m, needs: [load] }
  - name: tally
    steps:
      - { id: sum, run: [x], memory: numpy, estimate: 30s }
`;

export async function compileMixed(dir: string) {
  writeFileSync(join(dir, "inv.yaml"), MIXED_INVENTORY);
  writeFileSync(join(dir, "p.yaml"), MIXED_PIPELINE);
  const r = compilePlan(
    await loadPipelineFile(join(dir, "p.yaml")),
    await loadInventoryFile(join(dir, "inv.yaml")),
  );
  if (!r.plan) throw new Error(r.problems.map((p) => p.message).join("\n"));
  return r;
}
