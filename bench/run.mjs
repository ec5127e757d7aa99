// `gpuplan run` overhead, both paths, interleaved in one run (these machines are shared):
//   - CPU path: STEPS one-step CPU pipelines (`true`);
//   - GPU path: STEPS one-step GPU pipelines (`true`, vram 1GiB) on a fake NVML GPU: the plan is
//     verified against live detection, each pipeline takes and gives back a slot of the slot lock,
//     steps are pinned to the GPU's CPUs, memory snapshots and VRAM readings come from the run's
//     one long-lived sampler process; a fake libcuda is there too, its cuInit as slow as an H100's
//     (200 ms), which neither compile nor the check should call;
//   - the floor: the same spawns through posix_spawn (koffi) from a bare script, reaped on SIGCHLD,
//     with nothing else (no logs, journal, events or locks) — gpuplan's spawn path; and xargs -P.
// Every Node side runs without NODE_EXTRA_CA_CERTS (Node parses that bundle at each start-up;
// xargs pays nothing like it), so the ratios compare the runners, not the environment.
// Targets (issue 17): GPU path ≤ 1.3× CPU path; CPU path ≤ 1.3× the posix floor; ≤ 2 ms per step
// per lane above the floor. Plus the slot lock's own acquire+release latency (bench/lock-latency.mjs),
// and the same comparisons in CPU time, which other people's load on this machine moves much less.
//   npm run bench:run [-- STEPS CONCURRENCY ROUNDS]      (build first: npm run build; needs cc for the fake NVML)
import { spawnSync } from "node:child_process";
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { childrenCpuMs } from "./measure.mjs";

const root = join(fileURLToPath(import.meta.url), "../..");
const steps = Number(process.argv[2] ?? 500);
const concurrency = Number(process.argv[3] ?? 2);
const rounds = Number(process.argv[4] ?? 3);
const gpuplan = join(root, "bin/gpuplan.js");
const MISSING = "/nonexistent/gpuplan-bench-library.so";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-bench-run-"));
try {
  const { NODE_EXTRA_CA_CERTS: _ca, ...baseEnv } = process.env;
  const nvml = fakeLibrary(dir, "fake-nvml.c", "libnvidia-ml.so.1");
  // And a fake libcuda whose cuInit takes what a real one took on an H100 (~200 ms,
  // docs/real-gpu-check.md): a check that initialised CUDA again would show in the GPU path.
  const cuda = nvml && fakeLibrary(dir, "fake-cuda.c", "libcuda.so.1");
  const scenario = join(dir, "gpu.scenario");
  writeFileSync(
    scenario,
    [
      "nvml.driver = 550.54.15",
      "nvml.version = 12.550.54.15",
      "nvml.cuda = 12040",
      "nvml.count = 1",
      "nvml.0.name = NVIDIA H100 80GB HBM3",
      "nvml.0.uuid = GPU-b0000000-0000-4000-8000-000000000001",
      "nvml.0.pci = 00000000:07:00.0",
      "nvml.0.memory = 85899345920",
      "nvml.0.used = 1073741824",
      "nvml.0.cc = 9.0",
      `nvml.0.affinity = 0-${availableParallelism() - 1}`,
      "nvml.0.processes =",
      `nvml.init_log = ${join(dir, "nvml-inits.log")}`,
      "cuda.count = 1",
      "cuda.0.name = NVIDIA H100 80GB HBM3",
      "cuda.0.uuid = GPU-b0000000-0000-4000-8000-000000000001",
      "cuda.0.pci = 0000:07:00.0",
      "cuda.0.memory = 85899345920",
      "cuda.0.cc = 9.0",
      "cuda.init_delay_ms = 200",
      `cuda.init_log = ${join(dir, "cuda-inits.log")}`,
      "",
    ].join("\n"),
  );
  mkdirSync(join(dir, "locks"));
  const gpuEnv = {
    ...baseEnv,
    CI: "1",
    GPUPLAN_FAKE_SCENARIO: scenario,
    GPUPLAN_NVML_LIBRARY: nvml ?? MISSING,
    GPUPLAN_CUDA_LIBRARY: cuda ?? MISSING,
    GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
    GPUPLAN_AMD_SMI_LIBRARY: MISSING,
    GPUPLAN_HIP_LIBRARY: MISSING,
    GPUPLAN_SYSFS_ROOT: join(root, "fixtures/detect/sysfs-empty"),
    GPUPLAN_LOCK_DIR: join(dir, "locks"),
  };
  const cpuEnv = { ...baseEnv, CI: "1" };

  // One pipeline per step (a matrix), so `max_parallel_pipelines` is the concurrency, as -P is for xargs.
  const values = Array.from({ length: steps }, (_, i) => i + 1).join(", ");
  const pipelineFile = (registry, step) =>
    `version: 1\nname: bench\nregistry: { ${registry}, max_parallel_pipelines: ${concurrency} }\n` +
    `pipelines:\n  - name: t-{n}\n    matrix: { n: [${values}] }\n    steps:\n      - ${step}\n`;
  mkdirSync(join(dir, "cpu"));
  writeFileSync(
    join(dir, "cpu/bench.yaml"),
    pipelineFile("platform_priority: [cpu]", `{ id: s, run: ["true"], memory: numpy }`),
  );
  compile(join(dir, "cpu"), ["--target", "cpu-only"], cpuEnv);
  if (nvml) {
    mkdirSync(join(dir, "gpu"));
    writeFileSync(
      join(dir, "gpu/bench.yaml"),
      pipelineFile(
        `max_pipelines_per_gpu: ${concurrency}`,
        `{ id: s, run: ["true"], memory: torch, vram: 1GiB }`,
      ),
    );
    compile(join(dir, "gpu"), [], gpuEnv);
  }
  const input = Array.from({ length: steps }, (_, i) => String(i + 1)).join("\n");

  // CPU time too (user + system of the command and everything it started and reaped, from
  // /proc/self/stat's cutime + cstime around it): on this shared machine the wall figures move with
  // other people's load, the CPU a runner spends per step much less. Clock ticks (10 ms): fine for
  // runs of a few hundred ms. Linux only; elsewhere the CPU rows are left out.
  const cpu = { cpu: [], gpu: [], xargs: [], posixFloor: [] };
  let lastCpuMs = null;
  const time = (command, args, options = {}) => {
    const cpuBefore = childrenCpuMs();
    const start = process.hrtime.bigint();
    const r = spawnSync(command, args, {
      cwd: dir,
      stdio: ["pipe", "ignore", "pipe"],
      encoding: "utf8",
      env: baseEnv,
      ...options,
    });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    const cpuAfter = childrenCpuMs();
    lastCpuMs = Number.isNaN(cpuAfter - cpuBefore) ? null : cpuAfter - cpuBefore;
    if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    return ms;
  };
  // The floor for a runner that does not fork Node: the same spawns through posix_spawn (koffi),
  // reaped on SIGCHLD, and nothing else — no logs, journal, events or locks. gpuplan's spawn path.
  const posixFloorScript =
    `const koffi = require(${JSON.stringify(join(root, "node_modules/koffi"))}); const libc = koffi.load("libc.so.6");` +
    `const spawn = libc.func("int posix_spawn(_Out_ int *pid, const char *path, void *fa, void *attr, const char **argv, const char **envp)");` +
    `const waitpid = libc.func("int waitpid(int pid, _Out_ int *status, int options)");` +
    `const env = Object.entries(process.env).map(([k, v]) => k + "=" + v).concat([null]); const pending = new Map(); const st = new Int32Array(1);` +
    `const reap = () => { for (const [pid, done] of pending) if (waitpid(pid, st, 1) === pid) { pending.delete(pid); done(); } };` +
    `process.on("SIGCHLD", reap); const keep = setInterval(reap, 1000); let next = 0;` +
    `const lane = async () => { while (next < ${steps}) { next++; const pid = new Int32Array(1); spawn(pid, "/usr/bin/true", null, null, ["true", null], env);` +
    ` await new Promise((r) => { pending.set(pid[0], r); reap(); }); } };` +
    `Promise.all(Array.from({ length: ${concurrency} }, lane)).then(() => clearInterval(keep));`;
  const hasKoffi = existsSync(join(root, "node_modules/koffi")) && existsSync("/usr/bin/true");
  const runs = { cpu: [], gpu: [], xargs: [], posixFloor: [] };
  const run = (path, env) => {
    const ms = time(process.execPath, [gpuplan, "run", "plan.json", "--ui", "plain"], {
      cwd: join(dir, path),
      env,
    });
    rmSync(join(dir, path, ".gpuplan"), { recursive: true, force: true });
    return ms;
  };
  const timed = (name, ms) => {
    runs[name].push(ms);
    if (lastCpuMs !== null) cpu[name].push(lastCpuMs);
  };
  for (let i = 0; i < rounds; i++) {
    timed("xargs", time("xargs", ["-P", String(concurrency), "-n", "1", "true"], { input }));
    if (hasKoffi) timed("posixFloor", time(process.execPath, ["-e", posixFloorScript]));
    timed("cpu", run("cpu", cpuEnv));
    if (nvml) timed("gpu", run("gpu", gpuEnv));
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const list = (xs) => xs.map((v) => v.toFixed(0)).join(", ");
  const perLane = (ms, floor) => (((ms - floor) * concurrency) / steps).toFixed(2);
  const c = median(runs.cpu);
  const x = median(runs.xargs);
  console.log(
    `gpuplan run: ${steps} one-step pipelines (true) per path, concurrency ${concurrency}, median of ${rounds} interleaved rounds, NODE_EXTRA_CA_CERTS unset`,
  );
  console.log(`  xargs -P ${concurrency}     ${x.toFixed(0)} ms   (runs: ${list(runs.xargs)})`);
  const pf = hasKoffi ? median(runs.posixFloor) : null;
  if (pf !== null)
    console.log(
      `  posix floor    ${pf.toFixed(0)} ms   (runs: ${list(runs.posixFloor)}; bare posix_spawn loop through koffi) = ${(pf / x).toFixed(2)}× xargs`,
    );
  console.log(
    `  CPU path       ${c.toFixed(0)} ms   (runs: ${list(runs.cpu)}) = ${(c / x).toFixed(2)}× xargs`,
  );
  if (nvml) {
    const g = median(runs.gpu);
    console.log(
      `  GPU path       ${g.toFixed(0)} ms   (runs: ${list(runs.gpu)}; fake NVML and CUDA: verification, slot lock, pinning, snapshots)`,
    );
    console.log(`  GPU ÷ CPU      ${(g / c).toFixed(2)}×   (target ≤ 1.3×)`);
    // Every process that initialised NVML in the GPU runs: per run, the plan's verification and the sampler.
    const inits = existsSync(join(dir, "nvml-inits.log"))
      ? readFileSync(join(dir, "nvml-inits.log"), "utf8").trim().split("\n")
      : [];
    console.log(
      `  NVML readers   ${new Set(inits).size} processes over ${runs.gpu.length} GPU runs, ${inits.length} initialisations (compile's detection, then one per run: the check's child, which then serves the memory sampler)`,
    );
    const cudaInits = existsSync(join(dir, "cuda-inits.log"))
      ? readFileSync(join(dir, "cuda-inits.log"), "utf8").trim().split("\n").length
      : 0;
    console.log(
      `  cuInit calls   ${cuda ? cudaInits : "n/a (no fake CUDA)"} (fake CUDA at 200 ms each, as on an H100; compile and a run's check leave CUDA to NVML: expected 0)`,
    );
    if (pf !== null)
      console.log(
        `  per step       ${perLane(g, pf)} ms per lane on the GPU path, ${perLane(c, pf)} ms on the CPU path, above the posix floor ((path − floor) × ${concurrency} / ${steps}, start-up included; target ≤ 2 ms)`,
      );
  } else {
    console.log("  GPU path       n/a (no C compiler to build the fake NVML)");
  }
  if (pf !== null) console.log(`  CPU ÷ floor    ${(c / pf).toFixed(2)}×   (target ≤ 1.3×)`);
  if (cpu.cpu.length === runs.cpu.length && cpu.posixFloor.length === runs.posixFloor.length && pf !== null) {
    // The same comparisons in CPU time (every process of the run, the steps' own `true`s included).
    const cc = median(cpu.cpu);
    const cf = median(cpu.posixFloor);
    const perStep = (ms) => ((ms - cf) / steps).toFixed(2);
    console.log(
      `  CPU time       floor ${cf.toFixed(0)} ms, CPU path ${cc.toFixed(0)} ms = ${(cc / cf).toFixed(2)}× floor, ${perStep(cc)} ms per step above it` +
        (cpu.gpu.length === runs.gpu.length && nvml
          ? `; GPU path ${median(cpu.gpu).toFixed(0)} ms = ${(median(cpu.gpu) / cc).toFixed(2)}× CPU path, ${perStep(median(cpu.gpu))} ms per step above the floor`
          : "") +
        " (medians; user + system of each run's processes)",
    );
  }
  const latency = join(root, "bench/lock-latency.mjs");
  if (existsSync(latency) && existsSync(join(root, "dist/run/lock/index.js"))) {
    const { measureLockLatency } = await import(pathToFileURL(latency).href);
    const { medianMs, p95Ms } = await measureLockLatency({ iterations: 1000 });
    console.log(
      `  slot lock      acquire+release median ${medianMs.toFixed(3)} ms, p95 ${p95Ms.toFixed(3)} ms (uncontended)`,
    );
  }
} finally {
  if (!process.env.BENCH_KEEP) rmSync(dir, { recursive: true, force: true });
  else console.log(`kept ${dir}`);
}

function compile(cwd, extra, env) {
  const r = spawnSync(process.execPath, [gpuplan, "compile", "bench.yaml", ...extra, "-o", "plan.json"], {
    cwd,
    env,
    encoding: "utf8",
  });
  if (r.status !== 0) throw new Error(`compile failed: ${r.stderr}`);
}

/** A fake vendor library built here from fixtures/fake-libs (the sources as they are now); null without a C compiler. */
function fakeLibrary(into, source, file) {
  const out = join(into, file);
  const src = join(root, "fixtures/fake-libs");
  const r = spawnSync("cc", [
    "-shared",
    "-fPIC",
    "-O2",
    "-o",
    out,
    join(src, source),
    join(src, "scenario.c"),
  ]);
  return r.status === 0 ? out : null;
}
