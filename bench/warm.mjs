// Warm workers vs a fresh worker per task: TASKS pipelines on one GPU, each sending one task to a
// worker with a 1 s load and 20 ms tasks (examples/workers/segment-worker.mjs), once with
// `keep_warm` (one load) and once with `keep_warm: false` (a load per task), back to back in this
// process, through the built executor with the real slot lock in a temporary directory (no GPU
// needed: the plan's GPU comes from an inventory file).
//   npm run bench:warm [-- TASKS SLOTS LOAD_MS TASK_MS]      (build first: npm run build)
import { spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const root = join(fileURLToPath(import.meta.url), "../..");
const tasks = Number(process.argv[2] ?? 96);
const slots = Number(process.argv[3] ?? 4);
const loadMs = Number(process.argv[4] ?? 1000);
const taskMs = Number(process.argv[5] ?? 20);
const dist = (path) => pathToFileURL(join(root, "dist", path)).href;
if (!existsSync(join(root, "dist/run/executor/execute-run.js")))
  throw new Error("build first: npm run build");
const { executeRun } = await import(dist("run/executor/execute-run.js"));
const { createSlotLock } = await import(dist("run/lock/index.js"));
const { createRunDir, openJournal } = await import(dist("run/record/journal.js"));
const { readPlanFile } = await import(dist("plan/read-plan.js"));

const dir = mkdtempSync(join(tmpdir(), "gpuplan-bench-warm-"));
try {
  writeFileSync(
    join(dir, "inventory.yaml"),
    "gpus:\n  - { name: NVIDIA A100-SXM4-80GB, memory: 80GiB }\ncpu: { threads: 16, memory: 64GiB }\n",
  );
  const worker = join(root, "examples/workers/segment-worker.mjs");
  const values = Array.from({ length: tasks }, (_, i) => i + 1).join(", ");
  const pipelineFile = (keepWarm) =>
    `version: 1\nname: bench-warm\nregistry: { max_pipelines_per_gpu: ${slots}, workers: ${slots} }\n` +
    `pipelines:\n  - name: plate-{plate}\n    matrix: { plate: [${values}] }\n    steps:\n` +
    `      - id: segment\n        memory: torch\n        vram: 2GiB\n` +
    `        worker: { run: [node, ${JSON.stringify(worker)}, --load-ms, "${loadMs}", --task-ms, "${taskMs}"], key: seg, ready_timeout: 1m }\n` +
    `        keep_warm: ${keepWarm}\n`;

  const plan = async (name, keepWarm) => {
    writeFileSync(join(dir, `${name}.yaml`), pipelineFile(keepWarm));
    const r = spawnSync(
      process.execPath,
      [
        join(root, "bin/gpuplan.js"),
        "compile",
        `${name}.yaml`,
        "--inventory",
        "inventory.yaml",
        "-o",
        `${name}.json`,
      ],
      { cwd: dir, encoding: "utf8" },
    );
    if (r.status !== 0) throw new Error(`compile failed: ${r.stderr}`);
    // Read as `gpuplan run` reads it: a plan file leaves out what equals its schema default.
    const read = await readPlanFile(join(dir, `${name}.json`));
    if (!read.plan) throw new Error(`${name}.json: ${read.problems.map((p) => p.message).join("; ")}`);
    return read.plan;
  };

  const run = async (name, keepWarm) => {
    const p = await plan(name, keepWarm);
    const runDir = join(dir, `run-${name}`);
    await createRunDir(runDir, p);
    const journal = await openJournal(runDir);
    const loads = { n: 0 };
    const start = performance.now();
    const { summary } = await executeRun({
      plan: p,
      pipelines: p.pipelines,
      run: name,
      runDir,
      baseDir: dir,
      lock: createSlotLock({ dir: join(dir, "locks") }),
      emit: (e) => {
        if (e.event === "gpu.model.load_start") loads.n++;
      },
      journal,
      wait: true,
    });
    await journal.close();
    const ms = performance.now() - start;
    if (summary.failed > 0) throw new Error(`${name}: ${summary.failed} failed`);
    return { ms, loads: loads.n };
  };

  const warm = await run("warm", "{ ttl: 5m }");
  const cold = await run("cold", "false");
  const line = (name, r) =>
    `${name.padEnd(18)} ${(r.ms / 1000).toFixed(2).padStart(7)} s  ${String(r.loads).padStart(3)} loads  ${(r.ms / tasks).toFixed(1).padStart(7)} ms/task`;
  process.stdout.write(
    `${tasks} tasks on one GPU (${slots} slots), worker load ${loadMs} ms, task ${taskMs} ms\n` +
      `${line("keep_warm: 5m", warm)}\n${line("keep_warm: false", cold)}\n` +
      `speed-up (cold / warm): ${(cold.ms / warm.ms).toFixed(1)}x\n`,
  );
} finally {
  rmSync(dir, { recursive: true, force: true });
}
