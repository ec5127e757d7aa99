#!/usr/bin/env node
// npm run bench:compile — start-up of a small compile, the 2,000-pipeline × 10-step compile on a
// 64-GPU inventory (both as ratios to `node -e 0` measured in the same run), growth from 200 to
// 2,000 pipelines, and plan quality (makespan ÷ lower bound); then compiles with problems against
// clean ones (warningsWorkload).
// Targets: small ≤ 1.8×, large ≤ 15×, makespan ≤ 1.05× lower bound; with warnings on 10% of the
// pipelines ≤ 1.3× the clean compile's time and peak RSS; 100,000 problems located in < 3 s; then
// the mixed-VRAM workloads (bench/mixed-vram.mjs): makespan ≤ 1.05× the lower bound, 0 violations.
// Then the big plan (planSizeWorkload): 20,000 × 10 steps written to a file at ≤ 500 bytes per step
// with compile's peak RSS ≤ 600 MB, and the small compile no slower than --base's (≤ 1.05×).
// `--mixed-only` runs only the mixed workloads, `--size-only` only the big plan; `--base BIN` (e.g. /work/main/bin/gpuplan.js) also
// runs another build, interleaved with this one, for the big plan, the small compile and the mixed
// workloads.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { baseline, fmt, ratio, timeCommand } from "./measure.mjs";
import { mixedVramWorkloads } from "./mixed-vram.mjs";

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
const baseAt = process.argv.indexOf("--base");
const small = new URL("../examples/cell-painting.yaml", import.meta.url).pathname;
const mixed = () =>
  mixedVramWorkloads({ bin, dir, inventory, base: baseAt > 0 ? process.argv[baseAt + 1] : undefined });
if (process.argv.includes("--size-only")) {
  const met = planSizeWorkload();
  rmSync(dir, { recursive: true, force: true });
  process.exit(met ? 0 : 1);
}
if (process.argv.includes("--mixed-only")) {
  const met = mixed();
  rmSync(dir, { recursive: true, force: true });
  process.exit(met ? 0 : 1);
}
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
const warningsOk = warningsWorkload();
const sizeOk = planSizeWorkload();
const mixedOk = mixed();
rmSync(dir, { recursive: true, force: true });
process.stdout.write(
  ok && warningsOk && sizeOk && mixedOk
    ? "bench:compile: all targets met\n"
    : "bench:compile: a target was missed\n",
);

/** Peak RSS (getrusage, MB), wall time and exit status of one `node --import peak-rss.mjs BIN ARGS`. */
function measured(binary, args) {
  const rssFile = join(dir, "rss");
  const start = process.hrtime.bigint();
  const r = spawnSync(
    process.execPath,
    ["--import", new URL("./peak-rss.mjs", import.meta.url).href, binary, ...args],
    {
      env: { ...process.env, GPUPLAN_BENCH_RSS_FILE: rssFile },
      stdio: ["ignore", "ignore", "pipe"],
      maxBuffer: 1 << 30,
    },
  );
  const ms = Number(process.hrtime.bigint() - start) / 1e6;
  const mb = JSON.parse(readFileSync(rssFile, "utf8")).maxRSS / 1024;
  rmSync(rssFile);
  if (r.status !== 0)
    throw new Error(`${binary} ${args.join(" ")}: exit ${r.status}\n${String(r.stderr).slice(-2000)}`);
  return { ms, mb };
}

/**
 * The big plan (#17 target 4): 20,000 × 10 steps compiled to a file, 3 times — plan bytes per
 * step and compile's peak RSS (medians). With --base, that build's figures beside them, measured
 * interleaved, and the small compile's time against it (#17 target 5: not slower).
 */
function planSizeWorkload() {
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const other = baseAt > 0 ? process.argv[baseAt + 1] : undefined;
  seed = 42;
  const file = join(dir, "size-20000.yaml");
  writeFileSync(file, pipelineFile(20000));
  const steps = 20000 * 10;
  const builds = [["this build", bin], ...(other ? [["base", other]] : [])];
  const runs = new Map(builds.map(([name]) => [name, []]));
  const bytes = new Map();
  for (let i = 0; i < 3; i++) {
    for (const [name, binary] of builds) {
      const out = join(dir, `size-${name === "base" ? "base" : "this"}.json`);
      runs.get(name).push(measured(binary, ["compile", file, "--inventory", inventory, "-o", out]));
      bytes.set(name, statSync(out).size);
      rmSync(out);
    }
  }
  const rows = [];
  const perStep = bytes.get("this build") / steps;
  const rss = median(runs.get("this build").map((r) => r.mb));
  let ok = perStep <= 500 && rss <= 600;
  rows.push(
    ["plan 20,000 × 10: bytes per step", "", perStep.toFixed(0), "≤ 500"],
    [
      "plan 20,000 × 10: compile peak RSS",
      fmt(median(runs.get("this build").map((r) => r.ms))),
      `${rss.toFixed(0)} MB`,
      "≤ 600 MB",
    ],
  );
  if (other) {
    const baseRss = median(runs.get("base").map((r) => r.mb));
    rows.push(
      ["  base: bytes per step", "", (bytes.get("base") / steps).toFixed(0), ""],
      [
        "  base: compile peak RSS",
        fmt(median(runs.get("base").map((r) => r.ms))),
        `${baseRss.toFixed(0)} MB`,
        "",
      ],
      ["  plan size ÷ base", "", ratio(bytes.get("this build"), bytes.get("base")), ""],
      ["  peak RSS ÷ base", "", ratio(rss, baseRss), ""],
    );
    // The small compile, this build and base alternating, 11 runs each.
    const mine = [];
    const theirs = [];
    for (let i = 0; i < 11; i++) {
      mine.push(timeCommand([bin, "compile", small, "--target", "dgx-h100"], { runs: 1 }).median);
      theirs.push(timeCommand([other, "compile", small, "--target", "dgx-h100"], { runs: 1 }).median);
    }
    const slower = median(mine) / median(theirs);
    ok &&= slower <= 1.05;
    rows.push([
      "compile small ÷ base (interleaved)",
      fmt(median(mine)),
      ratio(median(mine), median(theirs)),
      "≤ 1.05×",
    ]);
  }
  for (const r of rows)
    process.stdout.write(`${r[0].padEnd(42)} ${r[1].padStart(9)} ${r[2].padStart(8)}  ${r[3]}\n`);
  return ok;
}

/**
 * Problems cost what they say, not a second parse of the file: the same 2,000- and 20,000-pipeline
 * files with a warning on every tenth pipeline (its first GPU step loses its `vram`), timed and
 * RSS-measured interleaved with the clean file; and a file of 100,000 unknown keys.
 */
function warningsWorkload() {
  const rssFile = join(dir, "rss");
  const probe = new URL("./peak-rss.mjs", import.meta.url).href;
  const measure = (args) => {
    const start = process.hrtime.bigint();
    const r = spawnSync(process.execPath, ["--import", probe, bin, ...args], {
      env: { ...process.env, GPUPLAN_BENCH_RSS_FILE: rssFile },
      stdio: ["ignore", "ignore", "pipe"],
      maxBuffer: 1 << 30,
    });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const kib = JSON.parse(readFileSync(rssFile, "utf8")).maxRSS;
    rmSync(rssFile);
    return { ms, mb: kib / 1024, status: r.status, stderr: String(r.stderr) };
  };
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const rows = [];
  let ok = true;
  for (const [count, runs] of [
    [2000, 5],
    [20000, 3],
  ]) {
    seed = 42;
    const cleanText = pipelineFile(count);
    const clean = join(dir, `clean-${count}.yaml`);
    const warned = join(dir, `warned-${count}.yaml`);
    writeFileSync(clean, cleanText);
    let warnedCount = 0;
    writeFileSync(
      warned,
      cleanText.replace(/ {2}- name: p(\d+)\n[\s\S]*?(?= {2}- name: |$)/g, (block, p) => {
        if (Number(p) % 10 !== 0) return block;
        warnedCount++;
        return block.replace(/\n {8}vram: \d+GiB/, "");
      }),
    );
    const a = [];
    const b = [];
    for (let i = 0; i < runs; i++) {
      a.push(measure(["compile", clean, "--inventory", inventory, "-o", join(dir, "clean.json")]));
      b.push(measure(["compile", warned, "--inventory", inventory, "-o", join(dir, "warned.json")]));
    }
    // Shown in full (the first 50), then counted on one line: every warning is located either way.
    const shownInFull = (b[0].stderr.match(/\[missing-vram\]/g) ?? []).length;
    const leftOut = /more not shown \([^)]*\): (?:[\d,]+ [\w-]+, )*?([\d,]+) missing-vram/.exec(b[0].stderr);
    const warnings = shownInFull + (leftOut ? Number(leftOut[1].replaceAll(",", "")) : 0);
    if (a.some((r) => r.status !== 0) || b.some((r) => r.status !== 0) || warnings !== warnedCount)
      throw new Error(
        `warned compile of ${count}: ${warnings} of ${warnedCount} warnings; exit statuses clean ${a.map((r) => r.status)}, warned ${b.map((r) => r.status)}\n${[...a, ...b].find((r) => r.status !== 0)?.stderr.slice(-2000) ?? b[0].stderr.slice(-2000)}`,
      );
    const time = median(b.map((r) => r.ms)) / median(a.map((r) => r.ms));
    const rss = median(b.map((r) => r.mb)) / median(a.map((r) => r.mb));
    ok &&= time <= 1.3 && rss <= 1.3;
    const n = count.toLocaleString("en");
    rows.push(
      [
        `compile ${n} × 10 clean`,
        fmt(median(a.map((r) => r.ms))),
        `${median(a.map((r) => r.mb)).toFixed(0)} MB`,
        "",
      ],
      [
        `  with ${warnings} warnings (10%)`,
        fmt(median(b.map((r) => r.ms))),
        `${median(b.map((r) => r.mb)).toFixed(0)} MB`,
        "",
      ],
      ["  time ÷ clean", "", `${time.toFixed(2)}×`, "≤ 1.30×"],
      ["  peak RSS ÷ clean", "", `${rss.toFixed(2)}×`, "≤ 1.30×"],
    );
  }
  const keys = join(dir, "unknown-keys.yaml");
  writeFileSync(
    keys,
    `version: 1\npipelines: [{ name: p, steps: [{ id: a, run: [echo] }] }]\n${Array.from(
      { length: 100_000 },
      (_, i) => `unknown_${i}: 1\n`,
    ).join("")}`,
  );
  const located = [1, 2, 3].map(() => measure(["compile", keys, "--target", "dgx-h100", "--format", "json"]));
  if (located.some((r) => r.status !== 1)) throw new Error(`unknown keys: exit ${located[0].status}`);
  const keysMs = median(located.map((r) => r.ms));
  ok &&= keysMs < 3000;
  rows.push([
    "100,000 unknown keys located (1.4 MB)",
    fmt(keysMs),
    `${median(located.map((r) => r.mb)).toFixed(0)} MB`,
    "< 3 s",
  ]);
  for (const r of rows)
    process.stdout.write(`${r[0].padEnd(42)} ${r[1].padStart(9)} ${r[2].padStart(8)}  ${r[3]}\n`);
  return ok;
}
