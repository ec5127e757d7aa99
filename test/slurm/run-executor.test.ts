// `gpuplan run --executor slurm` end to end on the real test cluster: the run submits job arrays,
// follows them with the plain view, merges the tasks' events into one events.jsonl, ends like a
// local run (0; 1 with the failed pipelines), and `--resume` submits only what did not complete.
import { spawnSync } from "node:child_process";
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import validateEvent from "../../src/generated/run-events-validator.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan } from "../helpers/cli.js";
import { sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const root = mkdtempSync(join(tmpdir(), "gpuplan-slurm-run-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

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

/** The run folder the follower made: the only one, the tasks record into it too. */
function slurmRunDir(dir: string): string {
  const runs = join(dir, ".gpuplan/runs");
  const found = readdirSync(runs);
  expect(found).toHaveLength(1);
  expect(existsSync(join(runs, found[0]!, "slurm/jobs.json"))).toBe(true);
  return join(runs, found[0]!);
}

function events(runDir: string): Record<string, unknown>[] {
  const lines = readFileSync(join(runDir, "events.jsonl"), "utf8").trim().split("\n");
  return lines.map((l) => JSON.parse(l));
}

function expectValidEvents(list: Record<string, unknown>[]) {
  for (const e of list)
    expect(validateEvent(e), `${JSON.stringify(e)}: ${JSON.stringify(validateEvent.errors)}`).toBe(true);
  const ts = list.map((e) => e.ts as string);
  expect(ts).toEqual([...ts].sort());
}

describe.skipIf(!cluster.ok)("gpuplan run --executor slurm on a real cluster", () => {
  const slurmEnv = () =>
    cluster.ok ? { SLURM_CONF: cluster.conf, GPUPLAN_LOCK_DIR: join(root, "locks") } : {};

  it.skipIf(!fakeLibsBuilt)(
    "8 pipelines × 2 steps on 4 GPUs, planned for the node type: at most 4 at once, each task on its own GPU, one merged events.jsonl, exit 0",
    () => {
      const dir = project(
        "gpu8",
        [
          "version: 1",
          "name: screen",
          "registry: { max_pipelines_per_gpu: 1 }",
          "pipelines:",
          "  - name: p{i}",
          "    matrix: { i: [0, 1, 2, 3, 4, 5, 6, 7] }",
          "    steps:",
          `      - { id: a, run: [sh, -c, 'echo "a $SLURM_JOB_GPUS $CUDA_VISIBLE_DEVICES $(date +%s.%N)" >> p{i}.log; sleep 0.7; echo "a-end $(date +%s.%N)" >> p{i}.log'], memory: torch, vram: 10GiB }`,
          `      - { id: b, run: [sh, -c, 'echo "b $SLURM_JOB_GPUS $CUDA_VISIBLE_DEVICES $(date +%s.%N)" >> p{i}.log'], memory: torch, vram: 10GiB, needs: [a] }`,
          "",
        ].join("\n"),
      );
      // Four H100s behind the fake NVML on the node: the eight-GPU scenario cut to four, no MIG.
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
      ok(
        gpuplan(["compile", "pipeline.yaml", "--inventory", "node.json", "-o", "plan.json"], {
          cwd: dir,
          env,
        }),
        "compile",
      );
      const run = gpuplan(["run", "plan.json", "--executor", "slurm", "--ui", "plain"], { cwd: dir, env });
      expect(run.exitCode, run.stderr).toBe(0);
      expect(run.stderr).toMatch(/submitted 8 pipelines as Slurm job array \d+ \(01-gpu-h100-1\.sbatch\)/);
      expect(run.stderr).toMatch(/\[p\d\] running on localhost, GPU [0-3] \(job \d+_\d\)/);
      expect(run.stderr).toMatch(/\[p\d\] pending in Slurm \(Resources\)/);
      expect(run.stderr).toContain("16 ok, 0 failed, 0 skipped");

      // Each task's steps ran on the GPU Slurm gave it (node-wide index → that card's UUID).
      const spans: { gpu: string; start: number; end: number }[] = [];
      for (let i = 0; i < 8; i++) {
        const lines = readFileSync(join(dir, `p${i}.log`), "utf8")
          .trim()
          .split("\n")
          .map((l) => l.split(" "));
        const [a, aEnd, b] = lines as [string[], string[], string[]];
        expect(a[0]).toBe("a");
        expect(a[1]).toMatch(/^[0-3]$/);
        expect(a[2]).toBe(uuids[Number(a[1])]);
        expect(b.slice(0, 3)).toEqual(["b", a[1], a[2]]);
        spans.push({ gpu: a[1]!, start: Number(a[3]), end: Number(aEnd[1]) });
      }
      // Never more than 4 at once, never two on one GPU.
      for (const s of spans) {
        const together = spans.filter((o) => o.start <= s.start && o.end > s.start);
        expect(together.length).toBeLessThanOrEqual(4);
        expect(new Set(together.map((o) => o.gpu)).size).toBe(together.length);
      }
      expect(new Set(spans.map((s) => s.gpu))).toEqual(new Set(["0", "1", "2", "3"]));

      const runDir = slurmRunDir(dir);
      const list = events(runDir);
      expectValidEvents(list);
      const run0 = list[0]!.run;
      expect(list.every((e) => e.run === run0)).toBe(true);
      expect(list.filter((e) => e.event === "run.start")).toHaveLength(1);
      expect(list.at(-1)).toMatchObject({ event: "run.end", status: "ok", ok: 16, failed: 0 });
      expect(list.filter((e) => e.event === "gpu.step.end" && e.status === "ok")).toHaveLength(16);
      expect(list.filter((e) => e.event === "slurm.task" && e.state === "COMPLETED")).toHaveLength(8);
    },
  );

  it("a CPU-only pipeline file runs with no GRES; a failing step fails only its pipeline, with the reason; exit 1", () => {
    const dir = project(
      "cpu",
      [
        "version: 1",
        "name: cpu-screen",
        "pipelines:",
        "  - name: well-{w}",
        "    matrix: { w: [a, b, c] }",
        "    steps:",
        `      - { id: load, run: [sh, -c, 'echo "{w} gpus=$SLURM_JOB_GPUS" > {w}.load; echo "loaded well {w}" >&2'], memory: numpy }`,
        "      - { id: measure, run: [sh, -c, 'cat {w}.load > {w}.measure'], memory: numpy, needs: [load] }",
        "  - name: broken",
        "    steps:",
        "      - { id: fail, run: [sh, -c, 'echo the well plate is empty >&2; exit 3'], memory: numpy }",
        "      - { id: after, run: [sh, -c, 'touch after'], memory: numpy, needs: [fail] }",
        "",
      ].join("\n"),
    );
    const env = slurmEnv();
    const run = gpuplan(["run", "pipeline.yaml", "--executor", "slurm", "--ui", "plain"], { cwd: dir, env });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(["a", "b", "c"].map((w) => readFileSync(join(dir, `${w}.measure`), "utf8"))).toEqual([
      "a gpus=\n",
      "b gpus=\n",
      "c gpus=\n",
    ]);
    expect(existsSync(join(dir, "after"))).toBe(false);
    expect(run.stderr).toContain("6 ok, 1 failed, 1 skipped");
    expect(run.stderr).toMatch(
      /✗ broken\/fail on cpu: exit 3\n\s+last stderr lines:\n\s+the well plate is empty/,
    );
    expect(run.stderr).toMatch(/\[broken\] failed in Slurm: FAILED \(NonZeroExitCode\), exit 1/);
    const runDir = slurmRunDir(dir);
    const list = events(runDir);
    expectValidEvents(list);
    // No GRES asked for: Slurm shows none for any task.
    const jobs = JSON.parse(readFileSync(join(runDir, "slurm/jobs.json"), "utf8")).arrays.map(
      (a: { job: string }) => a.job,
    );
    const gres = spawnSync("squeue", ["-h", "-r", "-t", "all", "-j", jobs.join(","), "-o", "%b"], {
      env: { ...process.env, ...env },
      encoding: "utf8",
    });
    expect(gres.stdout.trim().split("\n")).toEqual(Array(4).fill("N/A"));
    expect(list.at(-1)).toMatchObject({ event: "run.end", status: "failed", ok: 6, failed: 1, skipped: 1 });

    // One run, one folder: the tasks' step logs are in its logs/, their journals and events under slurm/.
    expect(readFileSync(join(runDir, "logs/well-a@load.err.log"), "utf8")).toBe("loaded well a\n");
    expect(readFileSync(join(runDir, "logs/broken@fail.err.log"), "utf8")).toBe("the well plate is empty\n");
    expect(readdirSync(join(runDir, "slurm/journals"))).toHaveLength(4);
    const ends = list.filter((e) => e.event === "gpu.step.end" && e.pipeline === "well-b");
    expect(ends.map((e) => e.stderrPath)).toEqual(
      ["load", "measure"].map((step) => join(runDir, `logs/well-b@${step}.err.log`)),
    );
    // gpuplan report of the run finds them: an ok step's last stderr lines come from its log.
    const html = ok(gpuplan(["report", runDir, "-o", "report.html"], { cwd: dir, env }), "report");
    expect(html.stderr).toContain("8 steps");
    expect(readFileSync(join(dir, "report.html"), "utf8")).toContain("loaded well c");
  });
});
