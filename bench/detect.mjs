#!/usr/bin/env node
// npm run bench:detect — wall time of `gpuplan detect --json` as a ratio to a bare `node -e 0`
// measured in the same run (medians of interleaved rounds): on this machine as it is, with no
// vendor library at all (the probe child is never started), and with the 8-GPU fake NVML
// (fixtures/fake-libs), whose probe child is a second Node start on the critical path.
//
// Node 20 parses NODE_EXTRA_CA_CERTS at every start (+35–50 ms here), which inflates node -e 0
// and gpuplan alike (not the probe child, which starts without it). So both are timed with the
// variable as it is and with it unset, and both views are printed; the targets apply to the
// unset view (CPU-only ≤ 1.8×, 8-GPU fake NVML ≤ 2.5×), where start-up cost is not hidden.
// BENCH_RUNS sets the rounds (default 21; this machine is shared, so more is steadier).
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, timeCommand } from "./measure.mjs";

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

const runs = Number(process.env.BENCH_RUNS ?? 21);
const caSet = Boolean(process.env.NODE_EXTRA_CA_CERTS);
// The views: as the environment is, and (when it sets it) without NODE_EXTRA_CA_CERTS.
const views = caSet
  ? [
      { name: "NODE_EXTRA_CA_CERTS set", env: {} },
      { name: "NODE_EXTRA_CA_CERTS unset", env: { NODE_EXTRA_CA_CERTS: undefined } },
    ]
  : [{ name: "NODE_EXTRA_CA_CERTS unset", env: {} }];

// Interleave every command round by round, so that load from other work on this shared machine
// falls on all of them alike instead of on whichever batch ran at the wrong moment.
const commands = views.flatMap((view) => [
  { view, baseline: true, args: ["-e", "0"], env: view.env },
  ...cases.map((c) => ({ view, case: c, args: [bin, "detect", "--json"], env: { ...c.env, ...view.env } })),
]);
const samples = commands.map(() => []);
for (let round = 0; round < runs; round++) {
  commands.forEach((c, i) => {
    const env = { ...process.env, ...c.env };
    for (const [k, v] of Object.entries(c.env)) if (v === undefined) delete env[k];
    samples[i].push(timeCommand(c.args, { runs: 1, env }).median);
  });
}

const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
let failed = false;
for (const view of views) {
  const of = (pred) => samples[commands.findIndex((c) => c.view === view && pred(c))];
  const base = median(of((c) => c.baseline));
  console.log(`\n${view.name} (${runs} interleaved rounds, medians):`);
  console.log(`  node -e 0: ${fmt(base)}`);
  for (const c of cases) {
    const t = median(of((c2) => c2.case === c));
    const r = t / base;
    const checked = view === views[views.length - 1] && c.target !== null;
    const verdict = !checked ? "" : r <= c.target ? `  ≤ ${c.target}× ok` : `  > ${c.target}× MISSED`;
    if (checked && r > c.target) failed = true;
    console.log(`  gpuplan detect --json, ${c.name}: ${fmt(t)} = ${r.toFixed(2)}×${verdict}`);
  }
}
if (!caSet) console.log("\n(NODE_EXTRA_CA_CERTS is not set here: one view.)");
process.exitCode = failed ? 1 : 0;
