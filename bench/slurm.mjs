// `gpuplan run --executor slurm` overhead: N one-step pipelines (`true`) through the Slurm executor
// (submit, follow, merge events) vs the same N commands as a plain `sbatch --array` of `true`
// followed by polling squeue, on the same one-node test cluster (test/helpers/slurm-cluster.ts,
// 16 declared CPUs), interleaved in one run. Needs Slurm installed and root, as the tests do.
//   npm run bench:slurm [-- PIPELINES ROUNDS]      (build first: npm run build)
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { build } from "esbuild";

const root = join(fileURLToPath(import.meta.url), "../..");
const pipelines = Number(process.argv[2] ?? 100);
const rounds = Number(process.argv[3] ?? 3);
const gpuplan = join(root, "bin/gpuplan.js");

// The tests' cluster helper, bundled for plain node (one cluster config, not two).
const work = mkdtempSync(join(tmpdir(), "gpuplan-bench-slurm-"));
const helper = join(work, "slurm-cluster.mjs");
await build({
  entryPoints: [join(root, "test/helpers/slurm-cluster.ts")],
  bundle: true,
  platform: "node",
  format: "esm",
  outfile: helper,
  logLevel: "error",
});
const { sharedCluster, removeClusterBase } = await import(pathToFileURL(helper).href);
const base = mkdtempSync(join(tmpdir(), "gpuplan-slurm-"));
const FINAL = /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|BOOT_FAIL|DEADLINE|PREEMPTED)$/;
try {
  const cluster = await sharedCluster(base);
  if (!cluster.ok) throw new Error(`no Slurm cluster: ${cluster.reason}`);
  const env = { ...process.env, SLURM_CONF: cluster.conf };
  const values = Array.from({ length: pipelines }, (_, i) => i).join(", ");
  writeFileSync(
    join(work, "bench.yaml"),
    `version: 1\nname: bench\npipelines:\n  - name: t-{n}\n    matrix: { n: [${values}] }\n    steps:\n      - { id: s, run: ["true"], memory: numpy }\n`,
  );

  const timed = (fn) => {
    const start = process.hrtime.bigint();
    fn();
    return Number(process.hrtime.bigint() - start) / 1e6;
  };
  const viaGpuplan = () =>
    timed(() => {
      const r = spawnSync(
        process.execPath,
        [gpuplan, "run", "bench.yaml", "--executor", "slurm", "--ui", "plain"],
        {
          cwd: work,
          env,
          encoding: "utf8",
        },
      );
      if (r.status !== 0) throw new Error(`gpuplan run --executor slurm failed: ${r.stderr.slice(-2000)}`);
    });
  const viaSbatch = () =>
    timed(() => {
      const s = spawnSync(
        "sbatch",
        ["--parsable", `--array=0-${pipelines - 1}`, "--output=/dev/null", "--wrap", "true"],
        { cwd: work, env, encoding: "utf8" },
      );
      if (s.status !== 0) throw new Error(`sbatch failed: ${s.stderr}`);
      const job = s.stdout.trim().split(";")[0];
      for (;;) {
        const q = spawnSync("squeue", ["-h", "-r", "-t", "all", "-j", job, "-o", "%T"], {
          env,
          encoding: "utf8",
        });
        const states = q.stdout.trim().split("\n").filter(Boolean);
        if (states.length >= pipelines && states.every((x) => FINAL.test(x))) return;
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 100);
      }
    });

  const plain = [];
  const executor = [];
  for (let r = 0; r < rounds; r++) {
    plain.push(viaSbatch());
    executor.push(viaGpuplan());
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const a = median(plain);
  const b = median(executor);
  console.log(
    `${pipelines} one-step pipelines, ${rounds} rounds, medians (cluster: 1 node, 16 CPUs declared):`,
  );
  console.log(`  sbatch --array of true, polled with squeue every 100 ms: ${(a / 1000).toFixed(2)} s`);
  console.log(`  gpuplan run --executor slurm:                           ${(b / 1000).toFixed(2)} s`);
  console.log(`  ratio ${(b / a).toFixed(2)}×, overhead ${((b - a) / pipelines).toFixed(0)} ms per pipeline`);
  console.log(
    `  (each round: ${plain.map((x) => (x / 1000).toFixed(2)).join(" ")} s vs ${executor.map((x) => (x / 1000).toFixed(2)).join(" ")} s)`,
  );
} finally {
  removeClusterBase(base);
  rmSync(work, { recursive: true, force: true });
}
