#!/usr/bin/env node
// npm run bench:yaml — why gpuplan reads files with two YAML parsers (docs/architecture.md):
// js-yaml's load() gives the data; `yaml`'s parseDocument() keeps every node's position, which
// only a problem to locate needs. Both parse the same 20,000-step pipeline file (2,000 pipelines
// × 10 steps, ~3 MB) in this process; the figure is the median of several runs after a warm-up.
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

function median(run, runs) {
  run();
  const samples = [];
  for (let i = 0; i < runs; i++) {
    const start = performance.now();
    run();
    samples.push(performance.now() - start);
  }
  samples.sort((a, b) => a - b);
  return samples[Math.floor(samples.length / 2)];
}

const text = pipelineFile();
const runs = Number(process.env.RUNS ?? 7);
const data = median(() => load(text, { schema: CORE_SCHEMA }), runs);
const positions = median(() => parseDocument(text, { uniqueKeys: false, prettyErrors: false }), runs);
console.log(`${PIPELINES * STEPS} steps, ${(text.length / 1e6).toFixed(1)} MB, median of ${runs} runs`);
console.log(`js-yaml load (data):                ${data.toFixed(0)} ms`);
console.log(
  `yaml parseDocument (positions):     ${positions.toFixed(0)} ms  (${(positions / data).toFixed(1)}× js-yaml)`,
);
