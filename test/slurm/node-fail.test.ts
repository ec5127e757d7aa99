// NODE_FAIL, for real: the node of a running task is set DOWN (`scontrol update state=down`), so
// slurmctld ends the task with NODE_FAIL, as when a node dies. Without --requeue the pipeline fails
// with Slurm's state; with --requeue Slurm requeues the task (squeue shows it PENDING again, the
// completion log NODE_FAIL), the follower waits for it, and the requeued task goes on from the
// step the node failure interrupted. Its own cluster: a node going down would fail the other
// files' jobs on the shared one.
import { type ChildProcess, spawn, spawnSync } from "node:child_process";
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
import { afterAll, describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";
import { claimClusterBase, removeClusterBase, sharedCluster } from "../helpers/slurm-cluster.js";

const base = mkdtempSync(join(tmpdir(), "gpuplan-slurm-"));
claimClusterBase(base);
const cluster = await sharedCluster(base);
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const root = mkdtempSync(join(tmpdir(), "gpuplan-slurm-nodefail-"));
const followers: ChildProcess[] = [];
afterAll(() => {
  for (const child of followers) if (child.exitCode === null) child.kill("SIGKILL");
  removeClusterBase(base);
  rmSync(root, { recursive: true, force: true });
});

const PIPELINE = [
  "version: 1",
  "name: nodefail",
  "pipelines:",
  "  - name: nf",
  "    steps:",
  "      - { id: a, run: [sh, -c, 'echo run >> a.count'], memory: numpy }",
  "      - { id: b, run: [sh, -c, 'trap \"exit 143\" INT TERM; echo run >> b.count; echo b ran >&2; touch b.started; while [ ! -f go ]; do sleep 0.1; done'], memory: numpy, needs: [a] }",
  "",
].join("\n");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
async function until<T>(what: string, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(100);
  }
}

describe.skipIf(!cluster.ok)("NODE_FAIL on a real cluster", () => {
  const env = () => (cluster.ok ? cluster.env : process.env);
  const slurm = (cmd: string, args: string[]) =>
    spawnSync(cmd, args, { env: env(), encoding: "utf8", timeout: 10_000 }).stdout.trim();

  /** Start the follower in `dir`; resolves its exit code and stderr. */
  function follow(
    dir: string,
    flags: string[],
  ): {
    child: ChildProcess;
    done: Promise<{ code: number | null; stderr: () => string }>;
    stderr: () => string;
  } {
    let stderr = "";
    const child = spawn(
      process.execPath,
      [
        join(ROOT, "bin/gpuplan.js"),
        "run",
        "pipeline.yaml",
        "--executor",
        "slurm",
        "--ui",
        "plain",
        ...flags,
      ],
      { cwd: dir, env: { ...env(), NO_COLOR: "1" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    followers.push(child);
    child.stderr!.on("data", (d) => (stderr += d));
    const exited = new Promise<{ code: number | null; stderr: () => string }>((r) =>
      child.on("exit", (code) => r({ code, stderr: () => stderr })),
    );
    // A follower that does not end within 40 s is stopped, and what it said is shown.
    const done = Promise.race([
      exited,
      sleep(40_000).then(() => {
        child.kill("SIGKILL");
        return { code: -1, stderr: () => `(still running after 40 s)\n${stderr}` };
      }),
    ]);
    return { child, done, stderr: () => stderr };
  }

  /** Step b runs: the node fails under it. */
  async function failTheNode(dir: string): Promise<string> {
    await until("step b to run", () => (existsSync(join(dir, "b.started")) ? true : undefined));
    const job = readdirSync(join(dir, ".gpuplan/runs")).map((r) =>
      JSON.parse(readFileSync(join(dir, ".gpuplan/runs", r, "slurm/jobs.json"), "utf8")),
    )[0].arrays[0].job as string;
    slurm("scontrol", ["update", "nodename=localhost", "state=down", "reason=gpuplan-test-node-failure"]);
    return `${job}_0`;
  }

  it("without --requeue: the task ends NODE_FAIL (not requeued behind the follower's back), its pipeline fails; exit 1", {
    timeout: 60_000,
  }, async () => {
    const dir = join(root, "no-requeue");
    mkdirSync(dir);
    writeFileSync(join(dir, "pipeline.yaml"), PIPELINE);
    const run = follow(dir, []);
    await failTheNode(dir);
    const { code, stderr } = await run.done;
    expect(code, stderr()).toBe(1);
    expect(stderr()).toMatch(/\[nf\] failed in Slurm: NODE_FAIL/);
    // Step b got Slurm's SIGTERM (its trap exits 143) or gpuplan's interrupt, whichever came first.
    expect(stderr()).toMatch(/✗ nf\/b on cpu: /);
    expect(stderr()).toContain("1 ok, 1 failed");
  });

  it("with --requeue: Slurm requeues the task, the follower waits, the task goes on from step b; exit 0", {
    timeout: 60_000,
  }, async () => {
    const dir = join(root, "requeue");
    mkdirSync(dir);
    writeFileSync(join(dir, "pipeline.yaml"), PIPELINE);
    const run = follow(dir, ["--requeue"]);
    const task = await failTheNode(dir);
    await until("the task to be requeued", () =>
      slurm("squeue", ["-h", "-r", "-t", "all", "-j", task, "-o", "%T"]) === "PENDING" ? true : undefined,
    );
    writeFileSync(join(dir, "go"), "");
    // The node is back as soon as slurmd answers (ReturnToService=2). The requeued task waits
    // (BeginTime) before it may start again, and is held when a launch came while the node still
    // ended the killed one: let it go, until it runs.
    let ran = false;
    run.done.then(() => (ran = true));
    await until("the requeued task to run", () => {
      if (ran) return true;
      const [state = "", reason = ""] = slurm("squeue", [
        "-h",
        "-r",
        "-t",
        "all",
        "-j",
        task,
        "-o",
        "%T|%r",
      ]).split("|");
      if (state !== "PENDING") return state === "RUNNING" || state === "COMPLETED" ? true : undefined;
      // A relaunch onto the node before the killed copy ended drains it ("duplicate jobid").
      if (/drain/.test(slurm("sinfo", ["-h", "-o", "%t"])))
        slurm("scontrol", ["update", "nodename=localhost", "state=resume"]);
      if (/held/i.test(reason)) slurm("scontrol", ["release", task]);
      else if (reason === "BeginTime") slurm("scontrol", ["update", `jobid=${task}`, "StartTime=now"]);
      return undefined;
    });
    const { code, stderr } = await run.done;
    expect(code, stderr()).toBe(0);
    expect(stderr()).toContain("2 ok, 0 failed");
    expect(stderr()).toMatch(/\[nf\/b cpu\] interrupted[\s\S]*\[nf\/b cpu\] started \(attempt 2\)/);
    // a completed before the node failed: not run again; b was interrupted by it: attempt 2.
    expect(readFileSync(join(dir, "a.count"), "utf8")).toBe("run\n");
    expect(readFileSync(join(dir, "b.count"), "utf8")).toBe("run\nrun\n");
    const runDir = join(dir, ".gpuplan/runs", readdirSync(join(dir, ".gpuplan/runs"))[0]!);
    expect(readFileSync(join(runDir, "logs/nf@b@2.err.log"), "utf8")).toBe("b ran\n");
    // The completion log has the NODE_FAIL squeue never showed.
    expect(slurm("sacct", ["-c", "-n", "-P", "-o", "State"]).split("\n")).toContain("NODE_FAIL");
  });
});
