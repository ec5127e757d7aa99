#!/usr/bin/env node
// npm run bench:detect — wall time of `gpuplan detect --json` as a ratio to `node -e 0` measured
// in the same run (median of several runs): on this machine as it is, with no vendor library at
// all (the probe child is never started), and with the 8-GPU fake NVML (fixtures/fake-libs).
// Targets: CPU-only ≤ 1.8×, 8-GPU fake NVML ≤ 2.5×.
import { execFileSync } from "node:child_process";
import { existsSync, mkdirSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { fmt, ratio, timeCommand } from "./measure.mjs";

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
// Node 20 parses NODE_EXTRA_CA_CERTS at every start (~70 ms on a small VM): it inflates node -e 0
// and gpuplan alike (not the probe child, which starts without it). When it is set, also time
// node -e 0 without it, so the report says what the baseline would be on a machine without it.
const extraCa = process.env.NODE_EXTRA_CA_CERTS
  ? [
      {
        name: "node -e 0 without NODE_EXTRA_CA_CERTS",
        args: ["-e", "0"],
        env: { NODE_EXTRA_CA_CERTS: undefined },
      },
    ]
  : [];
// Interleave the commands round by round, so that load from other work on this shared machine
// falls on every command alike instead of on whichever batch ran at the wrong moment.
const commands = [
  { name: "node -e 0", args: ["-e", "0"], env: {} },
  ...cases.map((c) => ({ ...c, args: [bin, "detect", "--json"] })),
  ...extraCa,
];
const samples = commands.map(() => []);
for (let round = 0; round < runs; round++) {
  commands.forEach((c, i) => {
    samples[i].push(timeCommand(c.args, { runs: 1, env: { ...process.env, ...c.env } }).median);
  });
}
const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
const base = median(samples[0]);
console.log(
  `node -e 0: median ${fmt(base)} (min ${fmt(Math.min(...samples[0]))}, ${runs} interleaved rounds)`,
);
let failed = false;
cases.forEach((c, i) => {
  const t = median(samples[i + 1]);
  const r = t / base;
  const verdict = c.target === null ? "" : r <= c.target ? ` ≤ ${c.target}× ok` : ` > ${c.target}× MISSED`;
  if (c.target !== null && r > c.target) failed = true;
  console.log(
    `gpuplan detect --json, ${c.name}: median ${fmt(t)} (min ${fmt(Math.min(...samples[i + 1]))}) = ${ratio(t, base)}${verdict}`,
  );
});
if (extraCa.length) {
  const noCa = samples[commands.length - 1];
  console.log(
    `note: NODE_EXTRA_CA_CERTS is set; node -e 0 without it: median ${fmt(median(noCa))} (min ${fmt(Math.min(...noCa))}). Run with env -u NODE_EXTRA_CA_CERTS for the ratios of a machine without it.`,
  );
}
process.exitCode = failed ? 1 : 0;
