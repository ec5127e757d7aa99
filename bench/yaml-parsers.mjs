#!/usr/bin/env node
// npm run bench:yaml — why gpuplan reads files with two YAML parsers (docs/architecture.md):
// js-yaml's load() gives the data; `yaml`'s parseDocument() keeps every node's position, which
// only a problem to locate needs, and is read only for YAML that the streaming scan
// (src/source/scan-offsets.ts, timed here too, from dist/: run npm run build first) declines.
// All three read the same 20,000-step pipeline file (2,000 pipelines × 10 steps, ~3 MB) in this
// process; each figure is the median of several runs after a warm-up, as wall time and as the
// process's CPU time (steadier than wall time on a shared machine).
import { performance } from "node:perf_hooks";
import { CORE_SCHEMA, load } from "js-yaml";
import { parseDocument } from "yaml";

const PIPELINES = 2000;
const STEPS = 10;

function pipelineFile() {
  const lines = ["version: 1", "name: bench", "pipelines:"];
  for (let p = 0; p < PIPELINES; p++) {
    lines.push(`  - name: p${p}`, "    steps:");
    for (let s = 0; s < STEPS; s++) {
      lines.push(
        `      - id: s${s}`,
        `        run: [python3, step${s}.py, --pipeline, "${p}"]`,
        "        memory: { input: numpy, output: torch }",
        `        vram: ${1 + ((p + s) % 8)}GiB`,
        `        estimate: ${5 + ((p * s) % 120)}s`,
      );
    }
  }
  return `${lines.join("\n")}\n`;
}

const middle = (xs) => xs.sort((a, b) => a - b)[Math.floor(xs.length / 2)];

function measure(run, runs) {
  run();
  const wall = [];
  const cpu = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    const used = process.cpuUsage();
    run();
    const { user, system } = process.cpuUsage(used);
    wall.push(performance.now() - start);
    cpu.push((user + system) / 1000);
  }
  return { wall: middle(wall), cpu: middle(cpu) };
}

const text = pipelineFile();
const runs = Number(process.env.RUNS ?? 7);
const data = measure(() => load(text, { schema: CORE_SCHEMA }), runs);
const positions = measure(() => parseDocument(text, { uniqueKeys: false, prettyErrors: false }), runs);
// The worst case for the scan: a pointer into the last step, so it reads the whole file.
const { scanOffsets } = await import("../dist/source/scan-offsets.js");
const last = [{ pointer: `/pipelines/${PIPELINES - 1}/steps/${STEPS - 1}/vram`, at: "value" }];
const scan = measure(() => scanOffsets(text, last), runs);

const row = (name, m) =>
  `${name.padEnd(36)} ${m.wall.toFixed(0).padStart(6)} ms wall ${(m.wall / data.wall).toFixed(2).padStart(6)}×` +
  `   ${m.cpu.toFixed(0).padStart(6)} ms CPU ${(m.cpu / data.cpu).toFixed(2).padStart(6)}×`;
console.log(
  `${PIPELINES * STEPS} steps, ${(text.length / 1e6).toFixed(1)} MB, median of ${runs} runs, × js-yaml`,
);
console.log(row("js-yaml load (data)", data));
console.log(row("yaml parseDocument (positions)", positions));
console.log(row("streaming scan to the last step", scan));
