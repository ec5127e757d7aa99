#!/usr/bin/env node
// npm run bench:detect — wall time of `gpuplan detect --json` as a ratio to `node -e 0` measured
// in the same run (median of several runs): on this machine as it is, with no vendor library at
// all (the probe child is never started), and with the 8-GPU fake NVML (fixtures/fake-libs).
// Targets: CPU-only ≤ 1.8×, 8-GPU fake NVML ≤ 2.5×.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { baseline, fmt, ratio, timeCommand } from "./measure.mjs";

const root = fileURLToPath(new URL("..", import.meta.url));
const bin = join(root, "bin/gpuplan.js");
const fakeNvml = join(root, "fixtures/lib/build/nvml/libnvidia-ml.so.1");
if (!existsSync(fakeNvml)) {
  mkdirSync(join(root, "fixtures/lib/build/nvml"), { recursive: true });
  const src = join(root, "fixtures/fake-libs");
  execFileSync("cc", [
    "-shared",
    "-fPIC",
    "-O1",
    "-o",
    fakeNvml,
    join(src, "fake-nvml.c"),
    join(src, "scenario.c"),
  ]);
}

const missing = "/nonexistent/gpuplan-bench.so";
const noLibraries = {
  GPUPLAN_NVML_LIBRARY: missing,
  GPUPLAN_CUDA_LIBRARY: missing,
  GPUPLAN_ROCM_SMI_LIBRARY: missing,
  GPUPLAN_AMD_SMI_LIBRARY: missing,
  GPUPLAN_HIP_LIBRARY: missing,
};
const cases = [
  { name: "this machine as it is (default library search)", env: {}, target: null },
  { name: "CPU-only, no vendor library (no probe child)", env: noLibraries, target: 1.8 },
  {
    name: "8-GPU fake NVML (8× H100, 2 in MIG mode)",
    env: {
      ...noLibraries,
      GPUPLAN_NVML_LIBRARY: fakeNvml,
      GPUPLAN_FAKE_SCENARIO: join(root, "fixtures/fake-libs/scenarios/h100x8-mig.scenario"),
    },
    target: 2.5,
  },
];

const runs = Number(process.env.BENCH_RUNS ?? 15);
const base = baseline(runs);
console.log(`node -e 0: median ${fmt(base.median)} (min ${fmt(base.min)}, ${runs} runs)`);
let failed = false;
for (const c of cases) {
  const t = timeCommand([bin, "detect", "--json"], { runs, env: { ...process.env, ...c.env } });
  const r = t.median / base.median;
  const verdict = c.target === null ? "" : r <= c.target ? ` ≤ ${c.target}× ok` : ` > ${c.target}× MISSED`;
  if (c.target !== null && r > c.target) failed = true;
  console.log(
    `gpuplan detect --json, ${c.name}: median ${fmt(t.median)} (min ${fmt(t.min)}) = ${ratio(t.median, base.median)}${verdict}`,
  );
}
process.exitCode = failed ? 1 : 0;
