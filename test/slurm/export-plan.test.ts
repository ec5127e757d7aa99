// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the expected text is bash, where ${…} is its own
// sbatch generation from a plan (pure; no cluster): arrays by resource request, shares of the node
// type, GRES types, time limits, shards, settings from the pipeline file, and scripts that bash
// runs as written whatever the pipeline names hold.
import { spawn, spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import { chmodSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { expandShortInventory } from "../../src/inventory/short-form.js";
import type { ShortInventory } from "../../src/inventory/types.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import { slurmExportOptions } from "../../src/slurm/executor-settings.js";
import { exportPlanToSlurm, type SlurmExportInput } from "../../src/slurm/export-plan.js";
import { planJobArrays } from "../../src/slurm/job-arrays.js";
import { type NodeShape, nodeShape } from "../../src/slurm/node-shape.js";
import { formatSlurmTime, pipelineTimeLimitMinutes } from "../../src/slurm/time-limit.js";
import { compileText } from "../helpers/inventory.js";
import { yaml } from "../helpers/pipeline.js";

const MiB = 1024 ** 2;
const dir = mkdtempSync(join(tmpdir(), "gpuplan-export-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The node type `detect --slurm --save` writes for the test cluster, with its Slurm annotation. */
const NODE: ShortInventory = {
  gpus: [{ name: "NVIDIA H100 80GB HBM3", memory: 81559 * MiB, count: 4, compute_capability: "9.0" }],
  cpu: { threads: 16, memory: "16000MiB", model: "Slurm node type h100x4-16cpu-16000mib" },
  slurm: {
    node_type: "h100x4-16cpu-16000mib",
    gres: [{ model: "NVIDIA H100 80GB HBM3", type: "h100", count: 4 }],
    shards_per_gpu: 4,
  },
};

function planFor(text: string, node: ShortInventory = NODE): { plan: GpuplanPlan; shape: NodeShape } {
  const inv = expandShortInventory(node, "file", "node.json");
  const result = compileText(text, inv);
  if (!result.plan) throw new Error(JSON.stringify(result.problems));
  return { plan: result.plan, shape: nodeShape(inv, "inventory node.json", node.slurm) };
}

function exported(
  plan: GpuplanPlan,
  node: NodeShape | null,
  flags = {},
  over: Partial<SlurmExportInput> = {},
) {
  return exportPlanToSlurm({
    plan,
    planLabel: "plan.json",
    node,
    options: slurmExportOptions(plan.settings.executor?.slurm, flags),
    outDir: "/srv/screen/out",
    planFile: "/srv/screen/out/plan.json",
    projectDir: "/srv/screen",
    nodeBinary: "/usr/bin/node",
    gpuplanBinary: "/opt/gpuplan/bin/gpuplan.js",
    gpuplanVersion: "0.0.0-test",
    ...over,
  });
}

const sbatchLines = (text: string) => text.split("\n").filter((l) => l.startsWith("#SBATCH "));

const MIXED = yaml`
  version: 1
  name: screen
  registry: { max_pipelines_per_gpu: 1 }
  pipelines:
    - name: plate-{p}
      matrix: { p: [1, 2, 3, 4, 5, 6] }
      steps:
        - { id: load, run: [load], memory: numpy, estimate: 2m }
        - { id: segment, run: [seg], memory: torch, vram: 20GiB, timeout: 10m, on_oom: { retries: 1, fallback: cpu } }
    - name: qc
      steps:
        - { id: report, run: [report], memory: numpy, estimate: 30s }
    - name: train
      gpus: 2
      steps:
        - { id: fit, run: [fit], memory: torch, vram: 40GiB, timeout: 2h }
`;

describe("sbatch generation", () => {
  it("groups pipelines with the same request into one array each: 6 one-GPU, 1 CPU, 1 two-GPU", () => {
    const { plan, shape } = planFor(MIXED);
    const out = exported(plan, shape);
    expect(out.problems.filter((p) => p.severity === "error")).toEqual([]);
    expect(
      out.arrays.map((a) => [a.script, a.pipelines.length, a.gres, a.cpusPerTask, a.memMiB, a.time]),
    ).toEqual([
      // 3 attempts × 10m + 3 × 2m + 1m start = 37 min.
      ["01-gpu-h100-1.sbatch", 6, "gpu:h100:1", 4, 4000, "00:37:00"],
      // The plan's 16 parallel pipelines share the node's 16 CPUs and 16000 MiB.
      ["02-cpu.sbatch", 1, null, 1, 1000, "00:03:00"],
      ["03-gpu-h100-2.sbatch", 1, "gpu:h100:2", 8, 8000, "02:01:00"],
    ]);
    expect(out.files.map((f) => f.name)).toEqual([
      "01-gpu-h100-1.sbatch",
      "02-cpu.sbatch",
      "03-gpu-h100-2.sbatch",
      "submit.sh",
    ]);
    const gpu = out.files[0]!.text;
    expect(sbatchLines(gpu)).toEqual([
      "#SBATCH --job-name=gpuplan-screen-1",
      "#SBATCH --array=0-5",
      "#SBATCH --gres=gpu:h100:1",
      "#SBATCH --cpus-per-task=4",
      "#SBATCH --mem=4000M",
      "#SBATCH --time=00:37:00",
      "#SBATCH --chdir=/srv/screen",
      "#SBATCH --output=/srv/screen/out/logs/%x-%A_%a.out",
      "#SBATCH --error=/srv/screen/out/logs/%x-%A_%a.err",
    ]);
    expect(gpu).toContain(
      "#   --gres=gpu:h100:1: the plan's GPU model NVIDIA H100 80GB HBM3 → h100 (node type h100x4-16cpu-16000mib)",
    );
    expect(gpu).toContain("#   --cpus-per-task=4: node type h100x4-16cpu-16000mib's 16 CPUs / (4 GPUs / 1)");
    // A CPU pipeline asks for nothing GPU and checks no GPU.
    const cpu = out.files[1]!.text;
    expect(cpu).not.toMatch(/--gres|SLURM_JOB_GPUS/);
    for (const f of out.files) expect(spawnSync("bash", ["-n"], { input: f.text }).status, f.name).toBe(0);
  });

  it("says in the plan's own words what each array task runs, and submit.sh submits every array", () => {
    const { plan, shape } = planFor(MIXED);
    const out = exported(plan, shape);
    // A GPU task binds its pipeline to the GPUs Slurm gave it; a CPU task has none to bind.
    expect(out.files[0]!.text).toContain(
      `exec "$NODE" "$GPUPLAN" run "$PLAN" --pipeline "$pipeline" --bind-slurm-gpus --ui plain --slurm-task "$task"`,
    );
    expect(out.files[1]!.text).toContain(
      `exec "$NODE" "$GPUPLAN" run "$PLAN" --pipeline "$pipeline" --ui plain --slurm-task "$task"`,
    );
    // First of all, each task leaves a marker the submitter reads (the run folder is shared).
    expect(out.files[0]!.text).toContain(`echo "$(hostname) $gpus" > "$STARTED_DIR/$task"`);
    expect(out.files[1]!.text).toContain(`echo "$(hostname) " > "$STARTED_DIR/$task"`);
    expect(out.files[0]!.text).toContain("NODE=${NODE:-/usr/bin/node}");
    expect(out.files[3]!.text).toContain(
      "for script in 01-gpu-h100-1.sbatch 02-cpu.sbatch 03-gpu-h100-2.sbatch; do",
    );
    expect(out.files[3]!.executable).toBe(true);
  });

  it("time limits: timeouts, else the factor × estimates, × OOM attempts, + a minute; whole minutes", () => {
    const { plan } = planFor(MIXED);
    const plate = plan.pipelines.find((p) => p.name === "plate-1")!;
    expect(pipelineTimeLimitMinutes(plate, 3)).toBe(37);
    expect(pipelineTimeLimitMinutes(plate, 5)).toBe(41);
    // timeout: 0 is no limit, not a limit of 0 ms: the factor × the estimate, not a one-minute task.
    const unlimited = planFor(
      "version: 1\npipelines: [{ name: p, steps: [{ id: s, run: [x], timeout: 0, estimate: 10m }] }]\n",
    ).plan.pipelines[0]!;
    expect(pipelineTimeLimitMinutes(unlimited, 3)).toBe(31);
    // A plan made before that says timeoutMs 0 itself: the same limit, never one minute.
    const [only] = unlimited.steps;
    const older = { ...unlimited, steps: [{ ...only, timeoutMs: 0 }] as typeof unlimited.steps };
    expect(pipelineTimeLimitMinutes(older, 3)).toBe(31);
    expect(formatSlurmTime(1)).toBe("00:01:00");
    expect(formatSlurmTime(1500)).toBe("1-01:00:00");
    const { plan: p2, shape } = planFor(MIXED);
    expect(exported(p2, shape, { timeFactor: 5 }).arrays[0]!.time).toBe("00:41:00");
    expect(exported(p2, shape, { timeMs: 90 * 60_000 }).arrays.map((a) => a.time)).toEqual([
      "01:30:00",
      "01:30:00",
      "01:30:00",
    ]);
  });

  it("a plan that shares GPUs asks for shards where the node type has them, else a whole GPU each", () => {
    const shared = yaml`
      version: 1
      registry: { max_pipelines_per_gpu: 2 }
      pipelines:
        - name: s{i}
          matrix: { i: [0, 1, 2, 3, 4, 5, 6, 7] }
          steps: [{ id: a, run: [a], memory: torch, vram: 8GiB }]
    `;
    const { plan, shape } = planFor(shared);
    expect(plan.registry.map((r) => r.maxPipelines)).toEqual([2, 2, 2, 2]);
    const withShards = exported(plan, shape);
    // 4 shards per GPU / 2 pipelines per GPU = 2 shards each; 8 tasks on 4 GPUs at 2 each.
    expect(withShards.arrays.map((a) => [a.gres, a.sharing, a.gpusPerTask, a.cpusPerTask, a.memMiB])).toEqual(
      [["shard:h100:2", "shard", 1, 2, 2000]],
    );
    expect(withShards.files[0]!.text).toContain("2 of its 4 shards → at most 2 tasks per GPU");
    const off = exported(plan, shape, { shards: false });
    expect(off.arrays.map((a) => [a.gres, a.sharing, a.cpusPerTask])).toEqual([
      ["gpu:h100:1", "whole-gpu", 4],
    ]);
    expect(off.files[0]!.text).toContain("shards are off: one pipeline per GPU");
    const noShards = planFor(shared, { ...NODE, slurm: { ...NODE.slurm!, shards_per_gpu: undefined } });
    expect(exported(noShards.plan, noShards.shape).arrays[0]!.gres).toBe("gpu:h100:1");
    // Three pipelines per GPU on 4 shards: 2 shards each, so never more than the plan's 3 (here 2).
    const three = planFor(shared.replace("max_pipelines_per_gpu: 2", "max_pipelines_per_gpu: 3"));
    expect(exported(three.plan, three.shape).arrays[0]!.gres).toBe("shard:h100:2");
  });

  it("GRES types: --gres-type wins (for all models, per model, or `any`), then the node type's, then the table", () => {
    const one = yaml`
      version: 1
      pipelines:
        - { name: a, steps: [{ id: s, run: [s], memory: torch, vram: 1GiB }] }
    `;
    const typed = planFor(one, {
      ...NODE,
      slurm: {
        ...NODE.slurm!,
        gres: [{ model: "NVIDIA H100 80GB HBM3", type: "nvidia_h100_80gb_hbm3", count: 4 }],
      },
    });
    expect(exported(typed.plan, typed.shape, { shards: false }).arrays[0]!.gres).toBe(
      "gpu:nvidia_h100_80gb_hbm3:1",
    );
    expect(
      exported(typed.plan, typed.shape, { shards: false, gresTypes: { "*": "hopper" } }).arrays[0]!.gres,
    ).toBe("gpu:hopper:1");
    expect(
      exported(typed.plan, typed.shape, { shards: false, gresTypes: { "NVIDIA H100 80GB HBM3": "any" } })
        .arrays[0]!.gres,
    ).toBe("gpu:1");
    // No node type known: gpuplan's model table; its figures unknown: Slurm's defaults, said as a warning.
    const bare = exported(typed.plan, null, { shards: false });
    expect(bare.arrays[0]).toMatchObject({ gres: "gpu:h100:1", cpusPerTask: 1, memMiB: null });
    expect(bare.problems.map((p) => p.code)).toContain("slurm-node-type-unknown");
    expect(sbatchLines(bare.files[0]!.text).some((l) => l.startsWith("#SBATCH --mem"))).toBe(false);
    // A model the table does not know: any GPU, with a warning that says how to name the type.
    const rtx = compileText(one, "rtx4090").plan!;
    const untyped = exported(rtx, null);
    expect(untyped.arrays[0]!.gres).toBe("gpu:1");
    const w = untyped.problems.find((p) => p.code === "slurm-unknown-gres-type")!;
    expect(w.severity).toBe("warning");
    expect(w.hint).toContain("--gres-type 'NVIDIA GeForce RTX 4090=TYPE'");
  });

  it("partition, account, qos, throttle and --sbatch-arg go on #SBATCH lines, the free arguments last", () => {
    const { plan, shape } = planFor(MIXED);
    const out = exported(plan, shape, {
      partition: "gpu",
      account: "lab42",
      qos: "high",
      throttle: 3,
      sbatchArgs: ["--constraint=ib", "--exclusive"],
    });
    const lines = sbatchLines(out.files[0]!.text);
    expect(lines).toContain("#SBATCH --array=0-5%3");
    expect(lines.slice(-5)).toEqual([
      "#SBATCH --partition=gpu",
      "#SBATCH --account=lab42",
      "#SBATCH --qos=high",
      "#SBATCH --constraint=ib",
      "#SBATCH --exclusive",
    ]);
  });

  it("splits an array larger than Slurm's default MaxArraySize", () => {
    const { plan, shape } = planFor(MIXED);
    const arrays = planJobArrays(plan, shape, slurmExportOptions(undefined, {}), 4);
    expect(arrays.map((a) => [a.index, a.pipelines.length, a.request.gres])).toEqual([
      [1, 4, "gpu:h100:1"],
      [2, 2, "gpu:h100:1"],
      [3, 1, null],
      [4, 1, "gpu:h100:2"],
    ]);
  });

  it("refuses folders an #SBATCH line cannot carry, and writes nothing for them", () => {
    const { plan, shape } = planFor(MIXED);
    const out = exported(plan, shape, {}, { outDir: "/srv/my out", projectDir: "/srv/100%" });
    expect(out.problems.filter((p) => p.code === "slurm-unsafe-path").map((p) => p.severity)).toEqual([
      "error",
      "error",
    ]);
  });

  it("executor settings from the pipeline file reach the plan and the script; flags win over them", () => {
    const text = yaml`
      version: 1
      name: with-settings
      registry:
        executor:
          slurm:
            partition: gpu
            account: lab
            gres_type: { "NVIDIA H100 80GB HBM3": hopper }
            throttle: 2
            time: 45m
            cpus_per_task: 3
            mem_per_task: 2GiB
            shards: false
            sbatch_args: ["--constraint=ib"]
      pipelines:
        - { name: a, steps: [{ id: s, run: [s], memory: torch, vram: 1GiB }] }
    `;
    const { plan, shape } = planFor(text);
    expect(plan.settings.executor).toEqual({
      slurm: {
        partition: "gpu",
        account: "lab",
        gresTypes: { "NVIDIA H100 80GB HBM3": "hopper" },
        throttle: 2,
        timeFactor: 3,
        timeMs: 45 * 60_000,
        cpusPerTask: 3,
        memPerTaskBytes: 2 * 1024 ** 3,
        shards: false,
        sbatchArgs: ["--constraint=ib"],
      },
    });
    const fromFile = exported(plan, shape);
    expect(fromFile.arrays[0]).toMatchObject({
      gres: "gpu:hopper:1",
      cpusPerTask: 3,
      memMiB: 2048,
      time: "00:45:00",
    });
    const lines = sbatchLines(fromFile.files[0]!.text);
    expect(lines).toContain("#SBATCH --array=0-0%2");
    expect(lines).toContain("#SBATCH --partition=gpu");
    expect(lines).toContain("#SBATCH --constraint=ib");
    const flagged = exported(plan, shape, {
      partition: "other",
      cpusPerTask: 5,
      sbatchArgs: ["--exclusive"],
    });
    const flaggedLines = sbatchLines(flagged.files[0]!.text);
    expect(flaggedLines).toContain("#SBATCH --partition=other");
    expect(flaggedLines).toContain("#SBATCH --cpus-per-task=5");
    expect(flaggedLines.slice(-2)).toEqual(["#SBATCH --constraint=ib", "#SBATCH --exclusive"]);
    // A file without executor settings makes the same plan as before: no settings.executor key.
    expect(planFor(MIXED).plan.settings).not.toHaveProperty("executor");
  });
});

describe("the generated script under bash (no Slurm: the variables a task gets, a stand-in for gpuplan)", () => {
  const recorder = join(dir, "record.sh");
  writeFileSync(recorder, '#!/bin/bash\nprintf "%s\\n" "$@" > "$RECORD"\n');
  chmodSync(recorder, 0o755);

  // The project folder the tasks run in (#SBATCH --chdir), with the exported plan copy.
  const projectDir = join(dir, "project");
  mkdirSync(join(projectDir, "out"), { recursive: true });
  writeFileSync(join(projectDir, "out/plan.json"), '{"plan":"as exported"}\n');
  const runDir = join(projectDir, ".gpuplan/runs/slurm-77");
  const inProject = (script: string) => script.replaceAll("/srv/screen", projectDir);

  function runTask(script: string, env: Record<string, string>) {
    const file = join(dir, "task.sbatch");
    writeFileSync(file, inProject(script));
    const record = join(dir, `record-${Math.random()}`);
    const r = spawnSync("bash", [file], {
      cwd: projectDir,
      encoding: "utf8",
      env: {
        PATH: process.env.PATH,
        NODE: "bash",
        GPUPLAN: recorder,
        RECORD: record,
        SLURM_ARRAY_JOB_ID: "77",
        ...env,
      },
    });
    let argv: string[] = [];
    try {
      argv = readFileSync(record, "utf8").split("\n").slice(0, -1);
    } catch {}
    return { status: r.status, stderr: r.stderr, argv };
  }

  it("task i runs pipeline i with its exact name, whatever quotes, $(…), backticks or newlines it holds", () => {
    const names = ["it's", "$(touch /tmp/pwned)", "`id`", "a\nb", "-x", "plain"];
    const text = yaml`
      version: 1
      pipelines:
        - name: "{n}"
          matrix: { n: [a] }
          steps: [{ id: s, run: [s], memory: numpy }]
    `;
    const { plan, shape } = planFor(text);
    const template = plan.pipelines[0]!;
    const many: GpuplanPlan = { ...plan, pipelines: names.map((name) => ({ ...template, name })) };
    const out = exported(many, shape);
    expect(out.arrays).toHaveLength(1);
    names.forEach((name, i) => {
      const r = runTask(out.files[0]!.text, { SLURM_ARRAY_TASK_ID: String(i) });
      expect(r.status, r.stderr).toBe(0);
      expect(r.argv).toEqual([
        "run",
        join(runDir, "plan.json"),
        "--pipeline",
        ...name.split("\n").slice(0, 1),
        ...(name.includes("\n") ? name.split("\n").slice(1) : []),
        "--ui",
        "plain",
        "--slurm-task",
        `77_${i}`,
      ]);
    });
  });

  it("the array's tasks share one run folder, slurm-JOB, that the first task to start makes whole", async () => {
    const { plan, shape } = planFor(MIXED);
    const out = exported(plan, shape);
    const script = join(dir, "race.sbatch");
    writeFileSync(script, inProject(out.files[1]!.text)); // the CPU array
    rmSync(join(projectDir, ".gpuplan"), { recursive: true, force: true });
    // Eight tasks at once, each a shell of its own: one folder comes out, with no leftovers.
    const tasks = Array.from(
      { length: 8 },
      (_, i) =>
        new Promise<number | null>((done) =>
          spawn("bash", [script], {
            cwd: projectDir,
            stdio: "ignore",
            env: {
              PATH: process.env.PATH,
              NODE: "true",
              SLURM_ARRAY_JOB_ID: "77",
              SLURM_ARRAY_TASK_ID: String(i % out.arrays[1]!.pipelines.length),
            },
          }).on("exit", done),
        ),
    );
    expect(await Promise.all(tasks)).toEqual(Array(8).fill(0));
    expect(readdirSync(join(projectDir, ".gpuplan/runs"))).toEqual(["slurm-77"]);
    expect(readFileSync(join(runDir, "plan.json"), "utf8")).toBe('{"plan":"as exported"}\n');
    const header = JSON.parse(readFileSync(join(runDir, "journal.jsonl"), "utf8"));
    expect(header).toMatchObject({
      type: "run",
      run: "slurm-77",
      input: join(projectDir, "out/plan.json"),
      baseDir: projectDir,
      pipelines: out.arrays[1]!.pipelines,
    });
    expect(new Date(header.startedAt).getTime()).not.toBeNaN();
    // The digest run --resume checks plan.json against, as gpuplan run records it.
    expect(header.planSha256).toBe(createHash("sha256").update('{"plan":"as exported"}\n').digest("hex"));
    expect(JSON.parse(readFileSync(join(runDir, "slurm/jobs.json"), "utf8"))).toEqual({
      schema: "gpuplan/slurm-run@1",
      arrays: [{ job: "77", script: out.arrays[1]!.script, pipelines: out.arrays[1]!.pipelines }],
    });
    expect(readdirSync(join(runDir, "slurm")).sort()).toEqual([
      "events",
      "jobs.json",
      "journals",
      "logs",
      "owner",
      "started",
    ]);
  });

  it("a node whose sha256sum is missing or says something else: the run folder is made without a digest", () => {
    const { plan, shape } = planFor(MIXED);
    const cpu = exported(plan, shape).files[1]!.text;
    const bin = join(dir, "odd-sha256sum");
    mkdirSync(bin, { recursive: true });
    for (const [name, script] of [
      ["failing", "exit 1"],
      ["odd", "echo 'SHA256 (stdin) = 0123'"],
      ["escaped", `printf '\\\\%s  -\\n' ${"a".repeat(64)}`],
    ]) {
      writeFileSync(join(bin, "sha256sum"), `#!/bin/sh\n${script}\n`);
      chmodSync(join(bin, "sha256sum"), 0o755);
      rmSync(join(projectDir, ".gpuplan"), { recursive: true, force: true });
      const r = runTask(cpu, { SLURM_ARRAY_TASK_ID: "0", PATH: `${bin}:${process.env.PATH}` });
      expect(r.status, `${name}: ${r.stderr}`).toBe(0);
      expect(r.argv[0], name).toBe("run");
      const header = JSON.parse(readFileSync(join(runDir, "journal.jsonl"), "utf8"));
      expect(header, name).toMatchObject({ type: "run", run: "slurm-77", baseDir: projectDir });
      expect(header, name).not.toHaveProperty("planSha256");
    }
    rmSync(join(projectDir, ".gpuplan"), { recursive: true, force: true });
  });

  it("a run folder slurm-JOB another array made (job ids repeat) is never adopted: the task refuses, nothing run", () => {
    const { plan, shape } = planFor(MIXED);
    const cpu = (exportId: string) => exported(plan, shape, {}, { exportId }).files[1]!.text;
    rmSync(join(projectDir, ".gpuplan"), { recursive: true, force: true });
    const first = runTask(cpu("aaaa"), { SLURM_ARRAY_TASK_ID: "0" });
    expect(first.status, first.stderr).toBe(0);
    expect(first.argv[0]).toBe("run");
    // The same array again (a requeued task, a later task): its own folder.
    expect(runTask(cpu("aaaa"), { SLURM_ARRAY_TASK_ID: "0" }).status).toBe(0);
    // Another export's array that Slurm gave the same job id: refused loudly, the old folder untouched.
    writeFileSync(join(runDir, "plan.json"), '{"plan":"the old run\'s"}\n');
    const other = runTask(cpu("bbbb"), { SLURM_ARRAY_TASK_ID: "0" });
    expect(other.status).toBe(1);
    expect(other.stderr).toContain(`the run folder ${runDir} is not this array's`);
    expect(other.argv).toEqual([]);
    expect(readFileSync(join(runDir, "plan.json"), "utf8")).toBe('{"plan":"the old run\'s"}\n');
    // The same export submitted again by submit.sh (a submission token of its own): refused too.
    const again = runTask(cpu("aaaa"), { SLURM_ARRAY_TASK_ID: "0", GPUPLAN_SUBMISSION: "later" });
    expect(again.status).toBe(1);
    expect(again.argv).toEqual([]);
    rmSync(join(projectDir, ".gpuplan"), { recursive: true, force: true });
  });

  it("a GPU task stops with a clear message when Slurm gave it no GPU list or the wrong number", () => {
    const { plan, shape } = planFor(MIXED);
    const script = exported(plan, shape).files[2]!.text; // the two-GPU array
    const none = runTask(script, { SLURM_ARRAY_TASK_ID: "0" });
    expect(none.status).toBe(1);
    expect(none.stderr).toContain("needs 2 GPUs, Slurm gave ''");
    expect(none.argv).toEqual([]);
    const wrong = runTask(script, { SLURM_ARRAY_TASK_ID: "0", SLURM_JOB_GPUS: "3" });
    expect(wrong.status).toBe(1);
    const right = runTask(script, { SLURM_ARRAY_TASK_ID: "0", SLURM_JOB_GPUS: "1,3" });
    expect(right.status).toBe(0);
    expect(right.stderr).toContain("runs pipeline train on");
    expect(right.argv.slice(0, 4)).toEqual(["run", join(runDir, "plan.json"), "--pipeline", "train"]);
  });
});
