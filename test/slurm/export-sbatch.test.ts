// `gpuplan export --to slurm` end to end on the real test cluster: the scripts it writes, submitted
// with sbatch, run a CPU-only plan and a GPU plan to completion (each task on its own GPU, through
// the fake NVML library) and share GPUs through shards.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import validateEvent from "../../src/generated/run-events-validator.js";
import validateExport from "../../src/generated/slurm-export-validator.js";
import { readPlanFile } from "../../src/plan/read-plan.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan } from "../helpers/cli.js";
import { sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const root = mkdtempSync(join(tmpdir(), "gpuplan-sbatch-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const FINAL = /^(COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL|BOOT_FAIL|DEADLINE|PREEMPTED)/;

interface TaskState {
  task: string;
  state: string;
  gres: string;
}

/** Poll squeue (never sbatch --wait: it backs off to 10 s) until every task of the arrays ended. */
async function waitForArrays(ids: string[], env: NodeJS.ProcessEnv, expected: number): Promise<TaskState[]> {
  const end = Date.now() + 90_000;
  for (let delay = 100; ; delay = Math.min(delay * 1.5, 1000)) {
    const r = spawnSync("squeue", ["-h", "-r", "-t", "all", "-j", ids.join(","), "-o", "%i|%T|%b"], {
      env,
      encoding: "utf8",
    });
    const tasks = r.stdout
      .split("\n")
      .filter(Boolean)
      .map((l) => {
        const [task, state, gres] = l.split("|");
        return { task: task!, state: state!, gres: gres! };
      });
    if (tasks.length >= expected && tasks.every((t) => FINAL.test(t.state)))
      return tasks.sort((a, b) => a.task.localeCompare(b.task, "en", { numeric: true }));
    if (Date.now() > end) throw new Error(`tasks did not finish in time: ${JSON.stringify(tasks)}`);
    await new Promise((r) => setTimeout(r, delay));
  }
}

function project(name: string, pipeline: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "pipeline.yaml"), pipeline);
  return dir;
}

function ok(r: { exitCode: number; stderr: string; stdout: string }, what: string) {
  expect(r.exitCode, `${what}: ${r.stderr}${r.stdout}`).toBe(0);
  return r;
}

describe.skipIf(!cluster.ok)("exported sbatch scripts on a real cluster", () => {
  const slurmEnv = () =>
    cluster.ok ? { SLURM_CONF: cluster.conf, GPUPLAN_LOCK_DIR: join(root, "locks") } : {};

  it("a CPU-only plan: sbatch of the script runs every pipeline with no GRES; a failing step fails only its task", async () => {
    const dir = project(
      "cpu",
      [
        "version: 1",
        "name: cpu-screen",
        "pipelines:",
        "  - name: well-{w}",
        "    matrix: { w: [a, b, c] }",
        "    steps:",
        `      - { id: load, run: [sh, -c, 'echo "$SLURM_ARRAY_TASK_ID gpus=$SLURM_JOB_GPUS" > {w}.load; echo loaded {w}'], memory: numpy }`,
        "      - { id: measure, run: [sh, -c, 'cat {w}.load > {w}.measure; echo measured {w}'], memory: numpy, timeout: 2m }",
        "  - name: broken",
        "    steps:",
        "      - { id: fail, run: [sh, -c, 'exit 3'], memory: numpy, timeout: 5m }",
        "",
      ].join("\n"),
    );
    const env = slurmEnv();
    ok(gpuplan(["detect", "--slurm", "--save", "node.json"], { cwd: dir, env }), "detect");
    ok(
      gpuplan(["compile", "pipeline.yaml", "--inventory", "node.json", "-o", "plan.json"], { cwd: dir, env }),
      "compile",
    );
    const exported = ok(
      gpuplan(["export", "plan.json", "--to", "slurm", "-o", "out", "--json"], { cwd: dir, env }),
      "export",
    );
    const report = JSON.parse(exported.stdout);
    expect(validateExport(report), JSON.stringify(validateExport.errors)).toBe(true);
    expect(report.nodeType).toBe("node type h100x4-16cpu-16000mib");
    expect(report.arrays).toEqual([
      expect.objectContaining({
        script: "01-cpu.sbatch",
        pipelines: ["well-a", "well-b", "well-c", "broken"],
        gres: null,
        cpusPerTask: 1,
        memMiB: 1000,
        time: "00:06:00",
      }),
    ]);
    // By hand, as a user would: sbatch the script.
    const sbatch = spawnSync("sbatch", ["--parsable", "out/01-cpu.sbatch"], {
      cwd: dir,
      env: { ...process.env, ...env },
      encoding: "utf8",
    });
    expect(sbatch.status, sbatch.stderr).toBe(0);
    const id = sbatch.stdout.trim().split(";")[0]!;
    const tasks = await waitForArrays([id], { ...process.env, ...env }, 4);
    expect(tasks.map((t) => [t.task, t.state, t.gres])).toEqual([
      [`${id}_0`, "COMPLETED", "N/A"],
      [`${id}_1`, "COMPLETED", "N/A"],
      [`${id}_2`, "COMPLETED", "N/A"],
      [`${id}_3`, "FAILED", "N/A"],
    ]);
    expect(["a", "b", "c"].map((w) => readFileSync(join(dir, `${w}.measure`), "utf8"))).toEqual([
      "0 gpus=\n",
      "1 gpus=\n",
      "2 gpus=\n",
    ]);
    // One run folder for the array, named from its job, as gpuplan run --executor slurm makes one:
    // the first task made it; every task recorded into it — every pipeline's step logs, each
    // task's journal and events.
    expect(readdirSync(join(dir, ".gpuplan/runs"))).toEqual([`slurm-${id}`]);
    const run = join(dir, ".gpuplan/runs", `slurm-${id}`);
    for (const w of ["a", "b", "c"]) {
      expect(readFileSync(join(run, "logs", `well-${w}@load.out.log`), "utf8")).toBe(`loaded ${w}\n`);
      expect(readFileSync(join(run, "logs", `well-${w}@measure.out.log`), "utf8")).toBe(`measured ${w}\n`);
    }
    expect(readdirSync(join(run, "logs"))).toContain("broken@fail.err.log");
    expect(readdirSync(join(run, "slurm/journals")).sort()).toEqual(
      [0, 1, 2, 3].map((i) => `${id}_${i}.jsonl`),
    );
    // Each task's events, lines the events schema describes.
    const events = readdirSync(join(run, "slurm/events")).sort();
    expect(events).toEqual([0, 1, 2, 3].map((i) => `${id}_${i}.jsonl`));
    for (const f of events) {
      const lines = readFileSync(join(run, "slurm/events", f), "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      for (const e of lines)
        expect(validateEvent(e), `${f}: ${JSON.stringify(validateEvent.errors)}`).toBe(true);
      expect(lines[0].event).toBe("run.start");
    }
    // Slurm's log of the failed task has gpuplan's account of it.
    const failed = readFileSync(join(dir, `out/logs/gpuplan-cpu-screen-1-${id}_3.err`), "utf8");
    expect(failed).toContain("runs pipeline broken");
    expect(failed).toMatch(/1 failed/);
    // gpuplan reads it as the run it is: each pipeline's state, the report, and a resume that
    // submits only the failed pipeline again (and fails it again: exit 1).
    const status = ok(gpuplan(["status", `slurm-${id}`, "--json"], { cwd: dir, env }), "status");
    expect(
      JSON.parse(status.stdout).pipelines.map((p: { pipeline: string; state: string }) => [
        p.pipeline,
        p.state,
      ]),
    ).toEqual([
      ["well-a", "done"],
      ["well-b", "done"],
      ["well-c", "done"],
      ["broken", "failed"],
    ]);
    // gpuplan runs lists it, as it stands once its tasks ended: failed, resumable.
    const listed = () =>
      JSON.parse(ok(gpuplan(["runs", "--json"], { cwd: dir, env }), "runs").stdout).runs as Record<
        string,
        unknown
      >[];
    expect(listed()).toEqual([
      expect.objectContaining({ id: `slurm-${id}`, status: "failed", ok: 6, failed: 1, resumable: true }),
    ]);
    const page = ok(gpuplan(["report", `slurm-${id}`, "-o", "-"], { cwd: dir, env }), "report");
    for (const p of ["well-a", "well-b", "well-c", "broken"]) expect(page.stdout).toContain(p);
    const resumed = gpuplan(["run", "--resume", `slurm-${id}`, "--ui", "plain"], { cwd: dir, env });
    expect(resumed.exitCode, resumed.stderr + resumed.stdout).toBe(1);
    const jobs = JSON.parse(readFileSync(join(run, "slurm/jobs.json"), "utf8"));
    expect(jobs.arrays.map((a: { pipelines: string[] }) => a.pipelines)).toEqual([
      ["well-a", "well-b", "well-c", "broken"],
      ["broken"],
    ]);
    expect(listed()).toEqual([
      expect.objectContaining({ id: `slurm-${id}`, status: "failed", resumable: true }),
    ]);
  });

  it.skipIf(!fakeLibsBuilt)(
    "a GPU plan: ./submit.sh runs one task per pipeline, each on the GPU Slurm gave it (SLURM_JOB_GPUS), which is its plan GPU",
    async () => {
      const dir = project(
        "gpu",
        [
          "version: 1",
          "name: gpu-screen",
          "registry: { max_pipelines_per_gpu: 1 }",
          "pipelines:",
          "  - name: g{i}",
          "    matrix: { i: [0, 1, 2, 3] }",
          "    steps:",
          `      - { id: infer, run: [sh, -c, 'echo "$SLURM_JOB_GPUS $CUDA_VISIBLE_DEVICES" > g{i}.gpu; sleep 1'], memory: torch, vram: 10GiB }`,
          "",
        ].join("\n"),
      );
      // Four H100s behind the fake NVML: the eight-GPU scenario cut to four, none in MIG mode.
      const scenario = join(dir, "h100x4.scenario");
      writeFileSync(
        scenario,
        `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.count = 4\nnvml.2.mig = 0\n`,
      );
      const uuids = [0, 1, 2, 3].map(
        (i) => new RegExp(`^nvml\\.${i}\\.uuid = (\\S+)$`, "m").exec(readFileSync(scenario, "utf8"))![1]!,
      );
      const env = {
        ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }),
        GPUPLAN_FAKE_SCENARIO: scenario,
        ...slurmEnv(),
      };
      ok(gpuplan(["detect", "--slurm", "--save", "node.json"], { cwd: dir, env }), "detect --slurm");
      // The plan names this machine's (fake) GPUs by UUID, as a plan compiled on a node does.
      ok(gpuplan(["detect", "--json", "--save", "inv.json"], { cwd: dir, env }), "detect");
      ok(
        gpuplan(["compile", "pipeline.yaml", "--inventory", "inv.json", "-o", "plan.json"], {
          cwd: dir,
          env,
        }),
        "compile",
      );
      const exported = ok(
        gpuplan(["export", "plan.json", "--to", "slurm", "-o", "out", "--inventory", "node.json"], {
          cwd: dir,
          env,
        }),
        "export",
      );
      expect(exported.stdout).toContain(
        "01-gpu-h100-1.sbatch  4 tasks  --gres=gpu:h100:1 --cpus-per-task=4 --mem=4000M",
      );
      expect(exported.stderr).toContain("[slurm-inventory-mismatch]");
      const submit = spawnSync(join(dir, "out/submit.sh"), [], {
        cwd: dir,
        env: { ...process.env, ...env },
        encoding: "utf8",
      });
      expect(submit.status, submit.stderr).toBe(0);
      const id = /^01-gpu-h100-1\.sbatch (\d+)$/m.exec(submit.stdout)![1]!;
      expect(readFileSync(join(dir, "out/jobs.txt"), "utf8")).toBe(`01-gpu-h100-1.sbatch ${id}\n`);
      const tasks = await waitForArrays([id], { ...process.env, ...env }, 4);
      const logs = (i: number) =>
        readFileSync(join(dir, `out/logs/gpuplan-gpu-screen-1-${id}_${i}.err`), "utf8");
      expect(
        tasks.map((t) => [t.state, t.gres]),
        tasks.map((_, i) => logs(i)).join("\n"),
      ).toEqual(Array(4).fill(["COMPLETED", "gres:gpu:h100:1"]));
      // Read as gpuplan reads it: a step's uuid is its pipeline GPU's unless the file says otherwise.
      const { plan } = await readPlanFile(join(dir, "plan.json"));
      const seen = plan!.pipelines.map((p) => {
        const [slurmGpus, visible] = readFileSync(join(dir, `${p.name}.gpu`), "utf8")
          .trim()
          .split(" ");
        // The step runs on the GPU Slurm allocated (its node-wide index), named by UUID, and that
        // GPU is the plan's GPU for the pipeline.
        expect(visible).toBe(uuids[Number(slurmGpus)]);
        expect(visible).toBe(p.steps[0]!.uuid);
        return slurmGpus;
      });
      expect([...seen].sort()).toEqual(["0", "1", "2", "3"]);
    },
  );

  it("a plan that shares GPUs asks for shards: 8 tasks on 4 GPUs, never more than 2 on one GPU at once", async () => {
    const dir = project(
      "shards",
      [
        "version: 1",
        "name: shared",
        "registry: { max_pipelines_per_gpu: 2 }",
        "pipelines:",
        "  - name: s{i}",
        "    matrix: { i: [0, 1, 2, 3, 4, 5, 6, 7] }",
        "    steps: [{ id: a, run: [a], memory: torch, vram: 8GiB }]",
        "",
      ].join("\n"),
    );
    const env = slurmEnv();
    ok(gpuplan(["detect", "--slurm", "--save", "node.json"], { cwd: dir, env }), "detect");
    ok(
      gpuplan(["compile", "pipeline.yaml", "--inventory", "node.json", "-o", "plan.json"], { cwd: dir, env }),
      "compile",
    );
    const exported = ok(
      gpuplan(["export", "plan.json", "--to", "slurm", "-o", "out", "--json"], { cwd: dir, env }),
      "export",
    );
    expect(JSON.parse(exported.stdout).arrays[0]).toMatchObject({ gres: "shard:h100:2", sharing: "shard" });
    // Slurm's side only: a stand-in for gpuplan records what each task got (binding a plan to
    // the GPU Slurm allocates is the follower's job, not the script's).
    const recorder = join(dir, "record.sh");
    writeFileSync(
      recorder,
      `#!/bin/bash\necho "$4 $SLURM_JOB_GPUS $(date +%s.%N)" >> ${dir}/tasks.txt; sleep 1.5; echo "$4 $SLURM_JOB_GPUS $(date +%s.%N) end" >> ${dir}/tasks.txt\n`,
    );
    chmodSync(recorder, 0o755);
    const runEnv = { ...process.env, ...env, NODE: "bash", GPUPLAN: recorder };
    const submit = spawnSync(join(dir, "out/submit.sh"), [], { cwd: dir, env: runEnv, encoding: "utf8" });
    expect(submit.status, submit.stderr).toBe(0);
    const id = submit.stdout.trim().split(" ")[1]!;
    const tasks = await waitForArrays([id], runEnv, 8);
    expect(tasks.map((t) => [t.state, t.gres])).toEqual(Array(8).fill(["COMPLETED", "gres:shard:h100:2"]));
    const lines = readFileSync(join(dir, "tasks.txt"), "utf8")
      .trim()
      .split("\n")
      .map((l) => l.split(" "));
    const starts = lines.filter((l) => l.length === 3);
    expect(starts.map((l) => l[0]).sort()).toEqual(["s0", "s1", "s2", "s3", "s4", "s5", "s6", "s7"]);
    for (const [, gpus] of starts) expect(gpus).toMatch(/^[0-3]$/);
    // At any start, at most 2 tasks hold that GPU.
    const spans = starts.map(([name, gpu, t]) => ({
      gpu,
      start: Number(t),
      end: Number(lines.find((l) => l[0] === name && l[3] === "end")![2]),
    }));
    for (const s of spans) {
      const together = spans.filter((o) => o.gpu === s.gpu && o.start <= s.start && o.end > s.start);
      expect(together.length).toBeLessThanOrEqual(2);
    }
  });
});
