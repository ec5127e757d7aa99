// A task that squeue no longer lists before gpuplan learned how it ended (a finished job leaves
// squeue after MinJobAge; here a stand-in squeue in front of the real one hides every ended task
// at once): the follower asks sacct — on this cluster, without slurmdbd, the job completion log
// (`sacct -c`, by each task's own job id) — and ends the pipeline with Slurm's state, instead of
// waiting for ever. Plus sacct's lines read back, for a cluster with accounting (`sacct -X`).
import { chmodSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { parseSacct, sacctTaskStates } from "../../src/slurm/follow/sacct-tasks.js";
import { gpuplan } from "../helpers/cli.js";
import { sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const root = mkdtempSync(join(tmpdir(), "gpuplan-slurm-sacct-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

describe.skipIf(!cluster.ok)("following tasks squeue forgot", () => {
  it("a task killed without gpuplan's account, gone from squeue, fails its pipeline with sacct's state", () => {
    const dir = join(root, "forgot");
    mkdirSync(join(dir, "bin"), { recursive: true });
    writeFileSync(
      join(dir, "pipeline.yaml"),
      [
        "version: 1",
        "name: forgotten",
        "pipelines:",
        "  - name: fine",
        "    steps:",
        "      - { id: a, run: [sh, -c, 'true'], memory: numpy }",
        "  - name: killed",
        "    steps:",
        // SIGKILL of the task's gpuplan: no run.end, Slurm alone knows how the task ended.
        "      - { id: a, run: [sh, -c, 'kill -9 $PPID; sleep 5'], memory: numpy }",
        "",
      ].join("\n"),
    );
    const squeue = join(dir, "bin/squeue");
    writeFileSync(
      squeue,
      `#!/bin/sh\n/usr/bin/squeue "$@" | grep -Ev '^[^|]*[|](COMPLETED|FAILED|CANCELLED|TIMEOUT|OUT_OF_MEMORY|NODE_FAIL) *[|]'\nexit 0\n`,
    );
    chmodSync(squeue, 0o755);
    const env = cluster.ok
      ? { SLURM_CONF: cluster.conf, PATH: `${join(dir, "bin")}:${process.env.PATH}` }
      : {};
    const run = gpuplan(["run", "pipeline.yaml", "--executor", "slurm", "--ui", "plain"], { cwd: dir, env });
    expect(run.exitCode, run.stderr).toBe(1);
    expect(run.stderr).toMatch(/\[killed\] failed in Slurm: FAILED \(job \d+_1\)/);
    // Slurm's word came from sacct: squeue never listed how the task ended.
    expect(run.stderr).toMatch(/✗ killed\/a on cpu: [^\n]*\n[\s\S]*hint: Slurm ended task FAILED/);
    expect(run.stderr).toContain("1 ok, 1 failed");
  });
});

describe("sacct's lines", () => {
  it("reads array tasks (accounting) and plain job ids (completion log), state words, exit:signal", () => {
    const text = [
      "12_0|COMPLETED|0:0|node7",
      "12_1|CANCELLED by 0|0:15|node8",
      "57|FAILED|3:0|localhost",
      "12_[2-4]|PENDING|0:0|None assigned",
      "junk",
    ].join("\n");
    expect(
      parseSacct(text).map(({ id, state: s }) => [id, s.job, s.task, s.state, s.exitCode, s.signal, s.node]),
    ).toEqual([
      ["12_0", "12", 0, "COMPLETED", 0, null, "node7"],
      ["12_1", "12", 1, "CANCELLED", null, 15, "node8"],
      ["57", "57", 0, "FAILED", 3, null, "localhost"],
    ]);
  });

  it("asks for 2,500 forgotten tasks' own job ids 1,000 at a time (one argument of them all is past Linux's 128 KiB)", async () => {
    const tasks = Array.from({ length: 2500 }, (_, i) => ({ name: `12_${i}`, rawJob: String(100000 + i) }));
    const calls: string[][] = [];
    const { states } = await sacctTaskStates(async (command, args) => {
      calls.push([command, ...args]);
      // No accounting: sacct -X fails, the completion log answers by each task's own id.
      if (args.includes("-X")) return { status: 1, stdout: "", stderr: "accounting storage is disabled" };
      const ids = args[args.indexOf("-j") + 1]!.split(",");
      expect(Buffer.byteLength(ids.join(","))).toBeLessThan(128 * 1024);
      return { status: 0, stdout: ids.map((id) => `${id}|COMPLETED|0:0|n1`).join("\n"), stderr: "" };
    }, tasks);
    expect(
      calls.filter((c) => c.includes("-c")).map((c) => c[c.indexOf("-j") + 1]!.split(",").length),
    ).toEqual([1000, 1000, 500]);
    expect(states.size).toBe(2500);
    expect(states.get("12_2499")).toMatchObject({ job: "12", task: 2499, state: "COMPLETED", exitCode: 0 });
  });

  it("a failing sacct call among several tells nothing rather than half", async () => {
    const tasks = Array.from({ length: 1500 }, (_, i) => ({ name: `12_${i}`, rawJob: String(100000 + i) }));
    let n = 0;
    const { states } = await sacctTaskStates(async (_command, args) => {
      if (args.includes("-X")) return { status: 1, stdout: "", stderr: "no accounting" };
      n += 1;
      if (n === 2) return { status: 1, stdout: "", stderr: "slurmctld not responding" };
      const ids = args[args.indexOf("-j") + 1]!.split(",");
      return { status: 0, stdout: ids.map((id) => `${id}|FAILED|1:0|n1`).join("\n"), stderr: "" };
    }, tasks);
    expect(states.size).toBe(0);
  });
});
