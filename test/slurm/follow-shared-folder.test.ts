// The follower's check that the run folder is shared with the nodes, against a stand-in for
// squeue (a real cluster on one machine always shares its folders): a task Slurm runs must leave
// its start marker in the run folder; when it never shows up the arrays are cancelled and the run
// stops with slurm-run-folder-not-shared. With the marker there, the node and GPUs come from it.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it, vi } from "vitest";
import type { PlannedPipeline } from "../../src/schema-types/plan.js";
import { followArrays } from "../../src/slurm/follow/follow-arrays.js";
import type { CommandOutput } from "../../src/slurm/read-cluster.js";

const root = mkdtempSync(join(tmpdir(), "gpuplan-follow-"));
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
  return dir;
}

/** squeue answers `state` for task 7_0; every call is recorded. */
function fakeSlurm(state: () => string) {
  const calls: string[][] = [];
  const run = async (command: string, args: readonly string[]): Promise<CommandOutput> => {
    calls.push([command, ...args]);
    if (command !== "squeue") return { status: 0, stdout: "", stderr: "" };
    const fields = ["7_0", state(), "None", "node3", "0"];
    return { status: 0, stdout: `${fields.map((f) => `${f.padEnd(12)}|`).join("")}\n`, stderr: "" };
  };
  return { run, calls };
}

describe("the run folder must be shared with the nodes", () => {
  it("a running task whose marker never shows up: the arrays are cancelled, slurm-run-folder-not-shared", async () => {
    const runDir = runFolder("unshared");
    const slurm = fakeSlurm(() => "RUNNING");
    const follow = followArrays({
      run: "r1",
      runDir,
      arrays: [{ job: "7", script: "01-gpu-h100-1.sbatch", pipelines: ["p0"] }],
      pipelines: new Map([["p0", pipeline]]),
      slurm: slurm.run,
      emit: () => undefined,
      requeue: false,
      sharedFolderTimeoutMs: 300,
      pollMs: { min: 20, max: 50 },
    });
    await expect(follow).rejects.toMatchObject({
      code: "slurm-run-folder-not-shared",
      message: expect.stringMatching(
        /task 7_0 .* on node3, but the marker it writes first never showed up in .*slurm\/started/,
      ),
    });
    expect(slurm.calls.at(-1)).toEqual(["scancel", "7"]);
  });

  it("with the marker there: the node and GPU come from it, the task's events are merged, the run ends", async () => {
    const runDir = runFolder("shared");
    writeFileSync(join(runDir, "slurm/started/7_0"), "node3 2\n");
    let state = "RUNNING";
    const slurm = fakeSlurm(() => state);
    const emitted: Record<string, unknown>[] = [];
    // A second ago: merged in time order, they come before the follower's own lines of this poll.
    const ts = new Date(Date.now() - 1000).toISOString();
    writeFileSync(
      join(runDir, "slurm/events/7_0.jsonl"),
      `${[
        { ts, event: "run.start", run: "task", pipeline: null, step: null, device: null },
        {
          ts,
          event: "gpu.step.start",
          run: "task",
          pipeline: "p0",
          step: "a",
          device: "cuda:0",
          attempt: 1,
          logPath: "x",
        },
        {
          ts,
          event: "gpu.step.end",
          run: "task",
          pipeline: "p0",
          step: "a",
          device: "cuda:0",
          status: "ok",
          exitCode: 0,
          signal: null,
          durationMs: 5,
          attempt: 1,
        },
        {
          ts,
          event: "run.end",
          run: "task",
          pipeline: null,
          step: null,
          device: null,
          durationMs: 9,
          status: "ok",
          ok: 1,
          failed: 0,
          skipped: 0,
        },
      ]
        .map((e) => JSON.stringify(e))
        .join("\n")}\n`,
    );
    setTimeout(() => (state = "COMPLETED"), 100);
    const result = await followArrays({
      run: "r1",
      runDir,
      arrays: [{ job: "7", script: "01-gpu-h100-1.sbatch", pipelines: ["p0"] }],
      pipelines: new Map([["p0", pipeline]]),
      slurm: slurm.run,
      emit: (e) => emitted.push(e as Record<string, unknown>),
      requeue: false,
      sharedFolderTimeoutMs: 300,
      pollMs: { min: 20, max: 50 },
    });
    expect(result).toEqual({ interrupted: false });
    expect(emitted.map((e) => [e.event, e.run, e.state ?? e.status ?? null])).toEqual([
      ["gpu.step.start", "r1", null],
      ["gpu.step.end", "r1", "ok"],
      ["slurm.task", "r1", "RUNNING"],
      ["slurm.task", "r1", "COMPLETED"],
    ]);
    expect(emitted[2]).toMatchObject({ node: "node3", gpus: "2", job: "7_0" });
    expect(slurm.calls.some((c) => c[0] === "scancel")).toBe(false);
  });
  it("a wall clock stepped forward (NTP) does not cut the wait for the marker short", async () => {
    const runDir = runFolder("clock-step");
    let state = "RUNNING";
    let polls = 0;
    const wall = Date.now;
    const slurm = fakeSlurm(() => {
      polls++;
      // Between the first and second poll the wall clock jumps a day ahead; the marker comes at the third.
      if (polls === 2) vi.spyOn(Date, "now").mockImplementation(() => wall() + 86_400_000);
      if (polls === 3) {
        writeFileSync(join(runDir, "slurm/started/7_0"), "node3 2\n");
        state = "COMPLETED";
      }
      return state;
    });
    try {
      const result = await followArrays({
        run: "r1",
        runDir,
        arrays: [{ job: "7", script: "01-gpu-h100-1.sbatch", pipelines: ["p0"] }],
        pipelines: new Map([["p0", pipeline]]),
        slurm: slurm.run,
        emit: () => undefined,
        requeue: false,
        sharedFolderTimeoutMs: 60_000,
        pollMs: { min: 20, max: 50 },
      });
      expect(result).toEqual({ interrupted: false });
      expect(slurm.calls.some((c) => c[0] === "scancel")).toBe(false);
    } finally {
      vi.restoreAllMocks();
    }
  });
});
