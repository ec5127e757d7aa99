// compile --history on the repository's own examples: run a pipeline, compile it again learning
// from that run, and compare each plan's estimated makespan with what the run really took (the
// span from its first step's start to its last step's end). Target: the learned plan within 15%.
// Cases: examples/hello-cpu.yaml (CPU), and bench/history-gpu.yaml on two fake NVML GPUs (needs
// the fake libraries `npm test` builds into fixtures/lib/build; skipped without them).
//   npm run bench:history [-- ROUNDS]      (build first: npm run build)
import { spawnSync } from "node:child_process";
import { copyFileSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(fileURLToPath(import.meta.url), "../..");
const rounds = Number(process.argv[2] ?? 1);
const gpuplan = join(root, "bin/gpuplan.js");
const MISSING = "/nonexistent/gpuplan-bench-library.so";
const noGpu = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(root, "fixtures/detect/sysfs-empty"),
};
const fakeNvml = join(root, "fixtures/lib/build/nvml/libnvidia-ml.so.1");

function cli(args, cwd, env) {
  const r = spawnSync(process.execPath, [gpuplan, ...args], {
    cwd,
    env: { ...process.env, ...env, CI: "1", NO_COLOR: "1" },
    encoding: "utf8",
  });
  return r;
}

/** The plan's estimated makespan: its summary, or — where this gpuplan's schedule leaves CPU pipelines out — with them on the host's lanes. */
function estimatedMakespan(plan) {
  const { summary, settings } = plan;
  const cpu = plan.pipelines.filter((p) => p.gpu === null).map((p) => p.estimateMs);
  const counted = cpu.length === 0 || summary.makespanMs >= Math.max(...cpu);
  if (counted) return { ms: summary.makespanMs, how: "plan summary" };
  // Longest first onto the free host lanes (max_parallel_pipelines), as the runner admits them.
  const lanes = new Array(Math.max(1, settings.maxParallelPipelines - summary.gpuPipelines)).fill(0);
  for (const ms of cpu.sort((a, b) => b - a)) {
    const i = lanes.indexOf(Math.min(...lanes));
    lanes[i] += ms;
  }
  return { ms: Math.max(summary.makespanMs, ...lanes), how: "host lanes added by the bench" };
}

/** What the run took: first step start to last step end, from its events. */
function actualMakespan(runDir) {
  const events = readFileSync(join(runDir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l));
  const starts = events.filter((e) => e.event === "gpu.step.start").map((e) => Date.parse(e.ts));
  const ends = events.filter((e) => e.event === "gpu.step.end").map((e) => Date.parse(e.ts));
  const wall = events.find((e) => e.event === "run.end")?.durationMs ?? null;
  return { ms: Math.max(...ends) - Math.min(...starts), wall };
}

function runCase(name, file, env, dir) {
  const run = cli(["run", file, "--ui", "plain"], dir, env);
  if (run.status !== 0)
    throw new Error(`${name}: gpuplan run exited ${run.status}: ${run.stderr.slice(-2000)}`);
  const id = readdirSync(join(dir, ".gpuplan/runs")).sort().at(-1);
  const typed = cli(["compile", file], dir, env);
  const learned = cli(["compile", file, "--history", id], dir, env);
  if (typed.status !== 0 || learned.status !== 0)
    throw new Error(`${name}: compile failed: ${typed.stderr}\n${learned.stderr}`);
  const typedPlan = JSON.parse(typed.stdout);
  const learnedPlan = JSON.parse(learned.stdout);
  const warnings = [...learned.stderr.matchAll(/\[(history-[a-z-]+)\]/g)].map((m) => m[1]);
  return {
    actual: actualMakespan(join(dir, ".gpuplan/runs", id)),
    typed: estimatedMakespan(typedPlan),
    learned: estimatedMakespan(learnedPlan),
    warnings,
    moved: learnedPlan.pipelines
      .map((p, i) => [p, typedPlan.pipelines[i]])
      .filter(([p, t]) => p.gpu !== t.gpu)
      .map(([p, t]) => `${p.name}: ${t.gpu} → ${p.gpu}`),
  };
}

const cases = [["hello-cpu", join(root, "examples/hello-cpu.yaml"), () => noGpu]];
if (existsSync(fakeNvml)) {
  cases.push([
    "fake-gpu",
    join(root, "bench/history-gpu.yaml"),
    (dir) => {
      const scenario = join(dir, "two-gpus.scenario");
      copyFileSync(join(root, "fixtures/report/two-gpus.scenario"), scenario);
      mkdirSync(join(dir, "locks"), { recursive: true });
      return {
        ...noGpu,
        GPUPLAN_NVML_LIBRARY: fakeNvml,
        GPUPLAN_FAKE_SCENARIO: scenario,
        GPUPLAN_LOCK_DIR: join(dir, "locks"),
      };
    },
  ]);
} else {
  console.log(`fake-gpu: skipped (no ${fakeNvml}; npm test builds it)`);
}

const s = (ms) => `${(ms / 1000).toFixed(2)} s`;
let worst = 0;
for (let round = 1; round <= rounds; round++) {
  for (const [name, file, envFor] of cases) {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-bench-history-"));
    try {
      const r = runCase(name, file, envFor(dir), dir);
      const off = r.learned.ms / r.actual.ms - 1;
      worst = Math.max(worst, Math.abs(off));
      console.log(
        `${name.padEnd(9)} round ${round}: actual ${s(r.actual.ms)} (run wall ${s(r.actual.wall)}); ` +
          `typed plan ${s(r.typed.ms)} (${(r.typed.ms / r.actual.ms).toFixed(2)}×); ` +
          `learned plan ${s(r.learned.ms)} (${(r.learned.ms / r.actual.ms).toFixed(2)}×, ${off >= 0 ? "+" : ""}${(off * 100).toFixed(1)}%)` +
          `${r.learned.how === "plan summary" ? "" : ` [${r.learned.how}]`}`,
      );
      console.log(
        `          warnings: ${r.warnings.join(", ") || "none"}${r.moved.length ? `; moved: ${r.moved.join(", ")}` : ""}`,
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }
}
console.log(
  `worst learned-plan error: ${(worst * 100).toFixed(1)}% (target ≤ 15%): ${worst <= 0.15 ? "ok" : "MISSED"}`,
);
