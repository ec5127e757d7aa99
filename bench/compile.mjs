#!/usr/bin/env node
// npm run bench:compile — start-up of a small compile, the 2,000-pipeline × 10-step compile on a
// 64-GPU inventory (both as ratios to `node -e 0` measured in the same run), growth from 200 to
// 2,000 pipelines, and plan quality (makespan ÷ lower bound).
// Targets: small ≤ 1.8×, large ≤ 15×, makespan ≤ 1.05× lower bound.
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baseline, fmt, ratio, timeCommand } from "./measure.mjs";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-bench-"));
const bin = new URL("../bin/gpuplan.js", import.meta.url).pathname;
const types = ["numpy", "cupy", "torch", "jax", "tensorflow"];

// A deterministic pseudo-random generator, so every run benches the same input.
let seed = 42;
const rand = () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

function pipelineFile(count) {
  const lines = ["version: 1", "name: bench", "registry:", "  memory_strategy: balanced", "pipelines:"];
  for (let p = 0; p < count; p++) {
    lines.push(`  - name: p${p}`, "    steps:");
    for (let s = 0; s < 10; s++) {
      const input = types[Math.floor(rand() * 3)];
      const output = s === 9 ? "numpy" : types[1 + Math.floor(rand() * 2)];
      lines.push(
        `      - id: s${s}`,
        `        run: [python3, step${s}.py, --pipeline, "${p}"]`,
        `        memory: { input: ${input}, output: ${output} }`,
        ...(input === "numpy" && output === "numpy"
          ? []
          : [`        vram: ${1 + Math.floor(rand() * 8)}GiB`]),
        `        estimate: ${5 + Math.floor(rand() * 120)}s`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

const inventory = join(dir, "inv-64.yaml");
writeFileSync(
  inventory,
  "gpus:\n  - { name: NVIDIA H100 80GB HBM3, memory: 80GiB, count: 64, compute_capability: '9.0' }\ncpu: { threads: 256, memory: 2TiB }\n",
);
const small = new URL("../examples/cell-painting.yaml", import.meta.url).pathname;
const f200 = join(dir, "p200.yaml");
const f2000 = join(dir, "p2000.yaml");
writeFileSync(f200, pipelineFile(200));
writeFileSync(f2000, pipelineFile(2000));

const base = baseline(11);
const smallRun = timeCommand([bin, "compile", small, "--target", "dgx-h100"], { runs: 11 });
const run200 = timeCommand([bin, "compile", f200, "--inventory", inventory, "-o", join(dir, "p200.json")], {
  runs: 5,
});
const run2000 = timeCommand(
  [bin, "compile", f2000, "--inventory", inventory, "-o", join(dir, "p2000.json")],
  { runs: 5 },
);
const plan = JSON.parse(readFileSync(join(dir, "p2000.json"), "utf8"));
const quality = plan.summary.makespanMs / plan.summary.lowerBoundMs;

const rows = [
  ["node -e 0", fmt(base.median), "1.00×", ""],
  [
    "compile small (cell-painting, dgx-h100)",
    fmt(smallRun.median),
    ratio(smallRun.median, base.median),
    "≤ 1.80×",
  ],
  ["compile 200 × 10 on 64 GPUs", fmt(run200.median), ratio(run200.median, base.median), ""],
  ["compile 2,000 × 10 on 64 GPUs", fmt(run2000.median), ratio(run2000.median, base.median), "≤ 15×"],
  [
    "growth 200 → 2,000 pipelines",
    "",
    ratio(run2000.median - base.median, run200.median - base.median),
    "(10× input)",
  ],
  ["makespan ÷ lower bound (2,000)", "", `${quality.toFixed(4)}`, "≤ 1.05"],
];
for (const r of rows)
  process.stdout.write(`${r[0].padEnd(42)} ${r[1].padStart(9)} ${r[2].padStart(8)}  ${r[3]}\n`);
const ok = smallRun.median / base.median <= 1.8 && run2000.median / base.median <= 15 && quality <= 1.05;
process.stdout.write(ok ? "bench:compile: all targets met\n" : "bench:compile: a target was missed\n");
