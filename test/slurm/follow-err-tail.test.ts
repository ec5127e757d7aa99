// When Slurm ends a task without gpuplan's own account (killed at its time limit), the follower
// closes its pipeline out with the last lines of the task's Slurm .err. That file is the task's
// output, outside text: a task that printed gigabytes must not be read whole for ten lines (3 GiB
// could not be read at all, and the lines were lost), and a FIFO in its place must not hold the
// follower waiting for a writer.
import { execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  ftruncateSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  rmSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PlannedPipeline } from "../../src/schema-types/plan.js";
import { followArrays } from "../../src/slurm/follow/follow-arrays.js";
import type { CommandOutput } from "../../src/slurm/read-cluster.js";

const root = mkdtempSync(join(tmpdir(), "gpuplan-follow-err-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

const pipeline = {
  name: "p0",
  gpus: ["cuda:0"],
  steps: [{ id: "a", device: "cuda:0", uuid: "GPU-x", needs: [], onOom: { retries: 0, fallback: null } }],
} as unknown as PlannedPipeline;

function runFolder(name: string): string {
  const dir = join(root, name);
  for (const d of ["slurm/events", "slurm/started", "slurm/logs"])
    mkdirSync(join(dir, d), { recursive: true });
  writeFileSync(join(dir, "slurm/started/7_0"), "node3 0\n");
  return dir;
}

/** Follows task 7_0, which squeue says timed out at once; the closing step end's stderrTail. */
async function closedTail(runDir: string): Promise<unknown> {
  const emitted: Record<string, unknown>[] = [];
  await followArrays({
    run: "r1",
    runDir,
    arrays: [{ job: "7", script: "01.sbatch", pipelines: ["p0"] }],
    pipelines: new Map([["p0", pipeline]]),
    slurm: async (command: string): Promise<CommandOutput> => ({
      status: 0,
      stdout: command === "squeue" ? `${["7_0", "TIMEOUT", "None", "node3", "0"].join("|")}|\n` : "",
      stderr: "",
    }),
    emit: (e) => emitted.push(e as unknown as Record<string, unknown>),
    requeue: false,
    sharedFolderTimeoutMs: 60_000,
    pollMs: { min: 20, max: 50 },
  });
  const end = emitted.find((e) => e.event === "gpu.step.end");
  expect(end).toMatchObject({ status: "timeout" });
  return end?.stderrTail;
}

describe("the last lines of a task's Slurm .err", () => {
  it("a .err of 3 GiB: only its end is read, and its last lines are said", async () => {
    const runDir = runFolder("huge");
    const path = join(runDir, "slurm/logs/job-7_0.err");
    // Sparse: 3 GiB of NULs (no disk) ending a line, then the lines that matter.
    const fd = openSync(path, "w");
    ftruncateSync(fd, 3 * 1024 ** 3);
    writeSync(
      fd,
      "\nCUDA error: out of memory\nslurmstepd: *** JOB 7 CANCELLED DUE TO TIME LIMIT ***\n",
      3 * 1024 ** 3,
    );
    closeSync(fd);
    const started = performance.now();
    expect(await closedTail(runDir)).toEqual([
      "CUDA error: out of memory",
      "slurmstepd: *** JOB 7 CANCELLED DUE TO TIME LIMIT ***",
    ]);
    expect(performance.now() - started).toBeLessThan(5000);
  });

  it("a long .err: its last ten lines, not a line cut where the read began", async () => {
    const runDir = runFolder("long");
    const lines = Array.from({ length: 20_000 }, (_, i) => `line ${i}`);
    writeFileSync(join(runDir, "slurm/logs/job-7_0.err"), `${lines.join("\n")}\n`);
    expect(await closedTail(runDir)).toEqual(lines.slice(-10));
  });

  it("a FIFO as the .err: not read, and the follower does not wait on it", async () => {
    const runDir = runFolder("fifo");
    const path = join(runDir, "slurm/logs/job-7_0.err");
    execFileSync("mkfifo", [path]);
    // Before the change the follower's read waited for this writer (and then read its junk).
    const writer = spawn("sh", ["-c", `sleep 3; echo junk > '${path}'`], { stdio: "ignore" });
    try {
      const started = performance.now();
      expect(await closedTail(runDir)).toBeUndefined();
      expect(performance.now() - started).toBeLessThan(2500);
    } finally {
      writer.kill("SIGKILL");
    }
  });
});
