// A run submitted to Slurm, resumed here (`--resume RUN --executor local`): what its tasks' own
// journals say completed is complete here too — the pipeline that completed is skipped, the one
// that failed goes on from its failed step, attempt 2, in the same run folder.
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { gpuplan } from "../helpers/cli.js";
import { sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const root = mkdtempSync(join(tmpdir(), "gpuplan-slurm-local-resume-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe.skipIf(!cluster.ok)("a Slurm run resumed here", () => {
  it("--executor local skips what the tasks' journals say completed and goes on from the failed step", async () => {
    const dir = join(root, "here");
    mkdirSync(dir);
    writeFileSync(
      join(dir, "pipeline.yaml"),
      [
        "version: 1",
        "name: two-steps",
        "pipelines:",
        "  - name: q{i}",
        "    matrix: { i: [0, 1] }",
        "    steps:",
        "      - { id: a, run: [sh, -c, 'echo run >> q{i}.a'], memory: numpy }",
        "      - { id: b, run: [sh, -c, 'echo run >> q{i}.b; [ {i} = 0 ] || [ -f go ]'], memory: numpy, needs: [a] }",
        "",
      ].join("\n"),
    );
    const run = (args: string[]) =>
      gpuplan(args, { cwd: dir, env: cluster.ok ? { SLURM_CONF: cluster.conf } : {} });
    const detached = run(["run", "pipeline.yaml", "--executor", "slurm", "--detach", "--json"]);
    expect(detached.exitCode, detached.stderr).toBe(0);
    const id: string = JSON.parse(detached.stdout).run;
    for (let i = 0; ; i++) {
      const s = JSON.parse(run(["status", id, "--json"]).stdout) as { pipelines: { state: string }[] };
      if (s.pipelines.map((p) => p.state).join() === "done,failed") break;
      if (i > 150) throw new Error("the detached run did not end");
      await sleep(200);
    }
    writeFileSync(join(dir, "go"), "");
    const here = run(["run", "--resume", id, "--executor", "local", "--ui", "plain"]);
    expect(here.exitCode, here.stderr).toBe(0);
    expect(here.stderr).toMatch(/\[q0\/b cpu\] skipped: completed/);
    expect(here.stderr).toMatch(/\[q1\/a cpu\] skipped: completed/);
    expect(here.stderr).toMatch(/\[q1\/b cpu\] started \(attempt 2\)/);
    const count = (f: string) => readFileSync(join(dir, f), "utf8");
    expect(["q0.a", "q0.b", "q1.a", "q1.b"].map(count)).toEqual(["run\n", "run\n", "run\n", "run\nrun\n"]);
  });
});
