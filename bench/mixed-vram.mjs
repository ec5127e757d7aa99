// Mixed-VRAM workloads for bench:compile (#16): 200 / 2,000 / 20,000 pipelines × 10 steps on 64
// H100s (256 threads: 4 slots each, 60 GiB budgets), written out as explicit pipelines and as matrix
// templates. 80% of pipelines have steps of 1–8 GiB, 15% one step of 10–16 GiB, 5% one of 24–40 GiB
// (seeded). For each plan: makespan ÷ a lower bound computed here from the plan alone —
// max(GPU work ÷ (GPUs × 4 slots), longest pipeline, Σ(work × peak) ÷ Σ budgets, work ÷ host lanes) —
// and budget and slot violations found by replaying the plan's starts with memory-aware admission.
// With --base BIN (e.g. /work/main/bin/gpuplan.js) the same files are compiled by that build too.
import { spawnSync } from "node:child_process";
import { readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

const SLOTS = 4;

export function mixedVramWorkloads({
  bin,
  base,
  dir,
  inventory,
  sizes = [200, 2000, 20000],
  out = process.stdout,
}) {
  const probe = new URL("./peak-rss.mjs", import.meta.url).href;
  const rssFile = join(dir, "mixed-rss");
  const compile = (gpuplan, file, plan) => {
    const start = process.hrtime.bigint();
    const r = spawnSync(
      process.execPath,
      ["--import", probe, gpuplan, "compile", file, "--inventory", inventory, "-o", plan],
      {
        env: { ...process.env, GPUPLAN_BENCH_RSS_FILE: rssFile },
        stdio: ["ignore", "ignore", "pipe"],
      },
    );
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0)
      throw new Error(`compile ${file}: exit ${r.status}\n${String(r.stderr).slice(-2000)}`);
    const mb = JSON.parse(readFileSync(rssFile, "utf8")).maxRSS / 1024;
    rmSync(rssFile);
    return { ms, mb, ...judge(JSON.parse(readFileSync(plan, "utf8"))) };
  };
  let ok = true;
  out.write(
    `${"mixed VRAM, 64 H100s".padEnd(30)} ${"makespan÷LB".padStart(11)} ${"binds".padStart(16)} ${"violations".padStart(10)} ${"compile".padStart(9)} ${"peak RSS".padStart(9)}\n`,
  );
  const row = (name, r) =>
    out.write(
      `${name.padEnd(30)} ${`${r.quality.toFixed(3)}×`.padStart(11)} ${r.binds.padStart(16)} ${String(r.violations).padStart(10)} ${`${r.ms.toFixed(0)} ms`.padStart(9)} ${`${r.mb.toFixed(0)} MB`.padStart(9)}\n`,
    );
  for (const form of ["explicit", "matrix"]) {
    for (const count of sizes) {
      const file = join(dir, `mixed-${form}-${count}.yaml`);
      writeFileSync(file, form === "explicit" ? explicitFile(count) : matrixFile(count));
      const mine = compile(bin, file, join(dir, "mixed.json"));
      ok &&= mine.quality <= 1.05 && mine.violations === 0;
      const n = `${form} ${count.toLocaleString("en")}`;
      row(n, mine);
      if (base) row(`  (base) ${n}`, compile(base, file, join(dir, "mixed-base.json")));
    }
  }
  out.write(`targets: makespan ≤ 1.05× the lower bound, 0 violations: ${ok ? "met" : "MISSED"}\n`);
  return ok;
}

/** Makespan ÷ the lower bound, and the violations of a memory-aware replay, from the plan alone. */
function judge(plan) {
  const gpus = plan.registry;
  const budget = new Map(gpus.map((e) => [e.gpu, e.memoryBudgetBytes - (e.warmReserveBytes ?? 0)]));
  const slots = new Map(gpus.map((e) => [e.gpu, e.maxPipelines]));
  let gpuWork = 0;
  let work = 0;
  let area = 0;
  let longest = 0;
  let makespan = 0;
  const events = new Map(gpus.map((e) => [e.gpu, []]));
  for (const p of plan.pipelines) {
    const start = p.estimatedStartMs;
    const end = start + p.estimateMs;
    makespan = Math.max(makespan, end);
    longest = Math.max(longest, p.estimateMs);
    work += p.estimateMs;
    // Format 2 leaves out what its x-default says (schemas/plan.schema.json): gpus is [gpu].
    const reserve = p.reservationBytes ?? p.peakVramBytes;
    for (const g of p.gpus ?? (p.gpu === null ? [] : [p.gpu])) {
      gpuWork += p.estimateMs;
      area += p.estimateMs * p.peakVramBytes;
      events.get(g).push([start, reserve, 1], [end, -reserve, -1]);
    }
  }
  let violations = 0;
  for (const [g, list] of events) {
    // Ends before starts at the same time: a pipeline ending frees what the next one takes.
    list.sort((a, b) => a[0] - b[0] || a[2] - b[2]);
    let bytes = 0;
    let running = 0;
    for (const [, d, n] of list) {
      bytes += d;
      running += n;
      if (n > 0 && (bytes > budget.get(g) || running > slots.get(g))) violations++;
    }
  }
  const terms = {
    "gpu-slots": gpuWork / (gpus.length * SLOTS),
    "longest-pipeline": longest,
    "gpu-memory": area / gpus.reduce((s, e) => s + e.memoryBudgetBytes, 0),
    "host-lanes": work / plan.settings.maxParallelPipelines,
  };
  const [binds, bound] = Object.entries(terms).reduce((a, b) => (b[1] > a[1] ? b : a));
  return { quality: makespan / bound, binds, violations };
}

/** A pipeline's ten steps: VRAM in GiB and estimate in seconds, by the 80 / 15 / 5 mix. */
function pipelineSteps(rand) {
  const r = rand();
  const big = r < 0.05 ? [24, 40] : r < 0.2 ? [10, 16] : null;
  const at = big ? Math.floor(rand() * 10) : -1;
  return Array.from({ length: 10 }, (_, s) => ({
    vram: s === at ? big[0] + Math.floor(rand() * (big[1] - big[0] + 1)) : 1 + Math.floor(rand() * 8),
    seconds: 5 + Math.floor(rand() * 120),
  }));
}

const seeded = (seed) => () => {
  seed = (seed * 1103515245 + 12345) % 2 ** 31;
  return seed / 2 ** 31;
};

const head = ["version: 1", "name: mixed", "registry:", "  memory_strategy: balanced", "pipelines:"];
const stepLines = (steps, arg) =>
  steps.flatMap((s, i) => [
    `      - id: s${i}`,
    `        run: [python3, step${i}.py, "${arg}"]`,
    "        memory: torch",
    `        vram: ${s.vram}GiB`,
    `        estimate: ${s.seconds}s`,
  ]);

function explicitFile(count) {
  const rand = seeded(16);
  const lines = [...head];
  for (let p = 0; p < count; p++)
    lines.push(`  - name: p${p}`, "    steps:", ...stepLines(pipelineSteps(rand), p));
  return `${lines.join("\n")}\n`;
}

/** Templates of 10 plates each; every plate of a template has the template's steps. */
function matrixFile(count) {
  const rand = seeded(16);
  // 20,000 × 10 is twice the steps a matrix may add by default.
  const lines = ["limits: { max_steps: 1000000 }", ...head];
  for (let t = 0; t < count / 10; t++)
    lines.push(
      `  - name: t${t}-{plate}`,
      `    matrix: { plate: [${Array.from({ length: 10 }, (_, i) => i).join(", ")}] }`,
      "    steps:",
      ...stepLines(pipelineSteps(rand), "{plate}"),
    );
  return `${lines.join("\n")}\n`;
}
