#!/usr/bin/env node
// npm run fuzz [-- --count N --seed S --jobs J]: the compile fuzz campaign of #11. Generated
// inputs (mutations of the examples, alias and matrix bombs, one-line files, huge numbers,
// control characters, deep nesting, odd encodings, hostile inventories) go through
// `gpuplan compile` one process each, JSON and human output in turn; it prints the figures and
// exits 1 when any run crashed, took over 5 s of CPU, used over 1 GB, left a problem unlocated or
// put a raw control character on the terminal.
//
// Time is judged as CPU time (user + system of the compile process): this machine is shared, and
// wall time says more about the neighbours than about gpuplan. Wall time is printed too.
import { mkdtempSync, rmSync } from "node:fs";
import { availableParallelism, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { parseArgs } from "node:util";
import { CATEGORY_NAMES, fuzzInputs } from "./inputs.mjs";
import { LIMITS, runCase } from "./run-case.mjs";

const { values } = parseArgs({
  options: {
    count: { type: "string", default: "10000" },
    seed: { type: "string", default: "1" },
    jobs: { type: "string", default: String(availableParallelism()) },
  },
});
const count = Number(values.count);
const seed = Number(values.seed);
const jobs = Math.max(1, Number(values.jobs));

const dir = mkdtempSync(join(tmpdir(), "gpuplan-fuzz-"));
const results = [];
const started = Date.now();
const inputs = fuzzInputs(seed, count);
let done = 0;

async function worker() {
  for (;;) {
    const next = inputs.next();
    if (next.done) return;
    const input = next.value;
    // JSON checks every location; human checks what reaches a terminal.
    const format = input.id % 3 === 2 ? "human" : "json";
    const r = await runCase(input, dir, format);
    results.push({
      ...r,
      stdout: undefined,
      stderr: r.violations.length ? r.stderr.slice(0, 2000) : undefined,
    });
    done++;
    if (r.violations.length)
      process.stderr.write(`#${r.id} ${r.category} (${r.describe}): ${r.violations.join("; ")}\n`);
    if (done % 500 === 0) {
      const s = ((Date.now() - started) / 1000).toFixed(0);
      process.stderr.write(`fuzz: ${done}/${count} in ${s} s, load ${loadavg()[0].toFixed(1)}\n`);
    }
  }
}
await Promise.all(Array.from({ length: jobs }, worker));
rmSync(dir, { recursive: true, force: true });

const by = (pred) => results.filter(pred).length;
const max = (list, key) => list.reduce((m, r) => (r[key] > (m?.[key] ?? -1) ? r : m), undefined);
const pct = (list, key, p) => {
  const sorted = list.map((r) => r[key]).sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((sorted.length * p) / 100))] ?? 0;
};
const fmtMs = (ms) => (ms >= 1000 ? `${(ms / 1000).toFixed(2)} s` : `${ms.toFixed(0)} ms`);
const row = (cells, widths) => cells.map((c, i) => String(c).padStart(widths[i])).join("  ");

const out = [];
const wall = ((Date.now() - started) / 1000).toFixed(0);
out.push(
  `gpuplan compile fuzz campaign: ${results.length} inputs (seed ${seed}), ${jobs} at a time, ${wall} s`,
);
out.push("");
const widths = [14, 7, 7, 7, 7, 10, 10, 9, 9];
out.push(
  row(
    ["category", "inputs", "exit 0", "exit 1", "exit 2", "max CPU", "max wall", "max RSS", "issues"],
    widths,
  ),
);
for (const name of CATEGORY_NAMES) {
  const list = results.filter((r) => r.category === name);
  out.push(
    row(
      [
        name,
        list.length,
        by((r) => r.category === name && r.exitCode === 0),
        by((r) => r.category === name && r.exitCode === 1),
        by((r) => r.category === name && r.exitCode === 2),
        fmtMs(max(list, "cpuMs")?.cpuMs ?? 0),
        fmtMs(max(list, "wallMs")?.wallMs ?? 0),
        `${(max(list, "rssMb")?.rssMb ?? 0).toFixed(0)} MB`,
        by((r) => r.category === name && r.violations.length > 0),
      ],
      widths,
    ),
  );
}
out.push("");
const crashes = results.filter((r) =>
  r.violations.some((v) => v.startsWith("crash") || v.startsWith("hang")),
);
const slow = results.filter((r) => r.cpuMs > LIMITS.cpuMs);
const big = results.filter((r) => r.rssMb > LIMITS.rssMb);
const unlocated = results.filter((r) =>
  r.violations.some((v) => v.startsWith("unlocated") || v.startsWith("stdout")),
);
const raw = results.filter((r) => r.violations.some((v) => v.startsWith("raw control")));
const slowest = max(results, "cpuMs");
const largest = max(results, "rssMb");
out.push(`crashes (internal error, stack trace, signal, hang): ${crashes.length}`);
out.push(
  `runs over ${LIMITS.cpuMs / 1000} s of CPU: ${slow.length} (CPU p50 ${fmtMs(pct(results, "cpuMs", 50))}, p99 ${fmtMs(pct(results, "cpuMs", 99))}, max ${fmtMs(slowest?.cpuMs ?? 0)}: #${slowest?.id} ${slowest?.describe})`,
);
out.push(
  `wall time on this shared machine: p50 ${fmtMs(pct(results, "wallMs", 50))}, p99 ${fmtMs(pct(results, "wallMs", 99))}, max ${fmtMs(max(results, "wallMs")?.wallMs ?? 0)}; over 5 s: ${by((r) => r.wallMs > 5000)}`,
);
out.push(
  `runs over ${LIMITS.rssMb} MB RSS: ${big.length} (p50 ${pct(results, "rssMb", 50).toFixed(0)} MB, max ${(largest?.rssMb ?? 0).toFixed(0)} MB: #${largest?.id} ${largest?.describe})`,
);
out.push(`problems without file:line:col: ${unlocated.length}`);
out.push(`raw control characters on the terminal: ${raw.length}`);
const failed = results.filter((r) => r.violations.length > 0);
out.push(failed.length === 0 ? "fuzz: all criteria met" : `fuzz: ${failed.length} inputs broke a criterion`);
process.stdout.write(`${out.join("\n")}\n`);
process.exitCode = failed.length === 0 ? 0 : 1;
