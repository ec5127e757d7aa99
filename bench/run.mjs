// `gpuplan run` overhead: 500 trivial steps (`true`) through `gpuplan run` vs the same commands
// through `xargs -P N`, with the same concurrency, interleaved in one run (these machines are
// shared), plus the slot lock's own acquire+release latency (bench/lock-latency.mjs).
//   npm run bench:run [-- STEPS CONCURRENCY ROUNDS]      (build first: npm run build)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { availableParallelism, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(fileURLToPath(import.meta.url), "../..");
const steps = Number(process.argv[2] ?? 500);
const concurrency = Number(process.argv[3] ?? Math.max(2, Math.min(8, availableParallelism())));
const rounds = Number(process.argv[4] ?? 3);
const gpuplan = join(root, "bin/gpuplan.js");

const dir = mkdtempSync(join(tmpdir(), "gpuplan-bench-run-"));
try {
  // One pipeline per step (a matrix), so `max_parallel_pipelines` is the concurrency, as -P is for xargs.
  const values = Array.from({ length: steps }, (_, i) => i + 1).join(", ");
  writeFileSync(
    join(dir, "bench.yaml"),
    `version: 1\nname: bench\nregistry: { platform_priority: [cpu], max_parallel_pipelines: ${concurrency} }\n` +
      `pipelines:\n  - name: t-{n}\n    matrix: { n: [${values}] }\n    steps:\n      - id: s\n        run: ["true"]\n        memory: numpy\n`,
  );
  const compiled = spawnSync(
    process.execPath,
    [gpuplan, "compile", "bench.yaml", "--target", "cpu-only", "-o", "plan.json"],
    {
      cwd: dir,
      encoding: "utf8",
    },
  );
  if (compiled.status !== 0) throw new Error(`compile failed: ${compiled.stderr}`);
  const input = Array.from({ length: steps }, (_, i) => String(i + 1)).join("\n");

  const time = (command, args, options = {}) => {
    const start = process.hrtime.bigint();
    const r = spawnSync(command, args, {
      cwd: dir,
      stdio: ["pipe", "ignore", "pipe"],
      encoding: "utf8",
      ...options,
    });
    const ms = Number(process.hrtime.bigint() - start) / 1e6;
    if (r.status !== 0) throw new Error(`${command} ${args.join(" ")} exited ${r.status}: ${r.stderr}`);
    return ms;
  };
  // The floor for any runner written in Node: the same spawns from a bare script (child_process
  // forks the whole node process, which costs far more than xargs' fork of a tiny C program).
  const floorScript =
    `import { spawn } from "node:child_process"; let next = 0;` +
    `const lane = async () => { while (next < ${steps}) { next++; await new Promise((r) => spawn("true", [], { stdio: ["ignore", "pipe", "pipe"], detached: true }).on("close", r)); } };` +
    `await Promise.all(Array.from({ length: ${concurrency} }, lane));`;
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
  const runs = { gpuplan: [], xargs: [], floor: [], posixFloor: [], noCa: [] };
  // Node 20 parses NODE_EXTRA_CA_CERTS at every start (~70 ms on a small VM); xargs pays nothing
  // like it. When it is set, gpuplan is also timed without it, so the report says both.
  const extraCa = Boolean(process.env.NODE_EXTRA_CA_CERTS);
  const { NODE_EXTRA_CA_CERTS: _ignored, ...withoutExtraCa } = process.env;
  for (let i = 0; i < rounds; i++) {
    runs.xargs.push(time("xargs", ["-P", String(concurrency), "-n", "1", "true"], { input }));
    runs.floor.push(time(process.execPath, ["--input-type=module", "-e", floorScript]));
    if (hasKoffi) runs.posixFloor.push(time(process.execPath, ["-e", posixFloorScript]));
    runs.gpuplan.push(
      time(process.execPath, [gpuplan, "run", "plan.json", "--ui", "plain"], {
        env: { ...process.env, CI: "1" },
      }),
    );
    if (extraCa) {
      runs.noCa.push(
        time(process.execPath, [gpuplan, "run", "plan.json", "--ui", "plain"], {
          env: { ...withoutExtraCa, CI: "1" },
        }),
      );
    }
    rmSync(join(dir, ".gpuplan"), { recursive: true, force: true });
  }
  const median = (xs) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)];
  const g = median(runs.gpuplan);
  const x = median(runs.xargs);
  const wallPerStep = (g - x) / steps;
  const lanePerStep = ((g - x) * concurrency) / steps;
  console.log(
    `gpuplan run: ${steps} trivial steps (true), concurrency ${concurrency}, median of ${rounds} interleaved rounds`,
  );
  console.log(
    `  gpuplan run   ${g.toFixed(0)} ms   (runs: ${runs.gpuplan.map((v) => v.toFixed(0)).join(", ")})`,
  );
  console.log(
    `  xargs -P ${concurrency}    ${x.toFixed(0)} ms   (runs: ${runs.xargs.map((v) => v.toFixed(0)).join(", ")})`,
  );
  const f = median(runs.floor);
  console.log(
    `  node floor    ${f.toFixed(0)} ms   (runs: ${runs.floor.map((v) => v.toFixed(0)).join(", ")}; bare child_process.spawn loop)`,
  );
  if (hasKoffi) {
    const pf = median(runs.posixFloor);
    console.log(
      `  posix floor   ${pf.toFixed(0)} ms   (runs: ${runs.posixFloor.map((v) => v.toFixed(0)).join(", ")}; bare posix_spawn loop through koffi, no bookkeeping) = ${(pf / x).toFixed(2)}× xargs; gpuplan is ${(g / pf).toFixed(2)}× it`,
    );
  }
  console.log(
    `  ratio         ${(g / x).toFixed(2)}× xargs   (target ≤ 1.3×); node floor alone is ${(f / x).toFixed(2)}× xargs`,
  );
  console.log(
    `  gpuplan's own ${((g - f) / steps).toFixed(2)} ms wall per step above the node floor ((gpuplan − floor) / ${steps}, start-up included)`,
  );
  console.log(
    `  overhead      ${lanePerStep.toFixed(2)} ms per step per lane ((gpuplan − xargs) × ${concurrency} / ${steps}; target ≤ 5 ms); ${wallPerStep.toFixed(2)} ms wall per step`,
  );
  if (extraCa) {
    const n = median(runs.noCa);
    console.log(
      `  note          NODE_EXTRA_CA_CERTS is set (Node parses it at start-up); without it gpuplan run takes ${n.toFixed(0)} ms = ${(n / x).toFixed(2)}× xargs, ${(((n - x) * concurrency) / steps).toFixed(2)} ms per step per lane`,
    );
  }
  const latency = join(root, "bench/lock-latency.mjs");
  if (existsSync(latency) && existsSync(join(root, "dist/run/lock/index.js"))) {
    const { measureLockLatency } = await import(pathToFileURL(latency).href);
    const { medianMs, p95Ms } = await measureLockLatency({ iterations: 1000 });
    console.log(
      `  slot lock     acquire+release median ${medianMs.toFixed(3)} ms, p95 ${p95Ms.toFixed(3)} ms (uncontended)`,
    );
  } else {
    console.log("  slot lock     n/a (bench/lock-latency.mjs or the built lock is missing)");
  }
} finally {
  rmSync(dir, { recursive: true, force: true });
}
