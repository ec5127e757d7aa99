// `gpuplan run --executor slurm` beyond one follow: --detach with `gpuplan status`, tasks
// cancelled under a run and `--resume` running only the pipelines that did not complete, Ctrl-C of
// the follower cancelling the arrays (exit 130), and --dry-run printing what would be submitted.
import { spawn, spawnSync } from "node:child_process";
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
import validateStatus from "../../src/generated/slurm-run-status-validator.js";
import validateSubmit from "../../src/generated/slurm-submit-validator.js";
import { gpuplan, ROOT } from "../helpers/cli.js";
import { sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const root = mkdtempSync(join(tmpdir(), "gpuplan-slurm-resume-"));
afterAll(() => rmSync(root, { recursive: true, force: true }));

/** p0, p1 finish at once; p2, p3 wait for the file `go` (each step counts its runs in NAME.count). */
const GATED = [
  "version: 1",
  "name: gated",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1, 2, 3] }",
  "    steps:",
  `      - { id: work, run: [sh, -c, 'echo run >> p{i}.count; if [ {i} -ge 2 ]; then while [ ! -f go ]; do sleep 0.1; done; fi'], memory: numpy, timeout: 5m }`,
  "",
].join("\n");

function project(name: string, pipeline: string): string {
  const dir = join(root, name);
  mkdirSync(dir);
  writeFileSync(join(dir, "pipeline.yaml"), pipeline);
  return dir;
}

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

describe.skipIf(!cluster.ok)("gpuplan run --executor slurm: detach, status, resume, Ctrl-C", () => {
  const env = () => (cluster.ok ? { SLURM_CONF: cluster.conf } : {});

  it("--detach returns at once; status follows it; two running tasks scancel'd, then --resume runs only those two", async () => {
    const dir = project("detach", GATED);
    const run = (args: string[]) => gpuplan(args, { cwd: dir, env: env() });
    const detached = run(["run", "pipeline.yaml", "--executor", "slurm", "--detach", "--json"]);
    expect(detached.exitCode, detached.stderr).toBe(0);
    const submitted = JSON.parse(detached.stdout);
    expect(validateSubmit(submitted), JSON.stringify(validateSubmit.errors)).toBe(true);
    const id: string = submitted.run;
    const job: string = submitted.jobs[0].job;

    const status = () => {
      const r = run(["status", id, "--json"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(validateStatus(doc), JSON.stringify(validateStatus.errors)).toBe(true);
      return doc as { pipelines: { pipeline: string; state: string; slurmState: string | null }[] };
    };
    const states = (doc: ReturnType<typeof status>) => doc.pipelines.map((p) => p.state);
    await until("p0, p1 done and p2, p3 running", () => {
      const s = states(status());
      return s.join() === "done,done,running,running" ? s : undefined;
    });
    const text = run(["status", id]);
    expect(text.stdout).toMatch(new RegExp(`p2\\s+running\\s+job ${job}_2\\s+localhost`));
    // gpuplan runs: no gpuplan follows it, Slurm still runs two of its tasks; a resume would be refused.
    const listed = () => {
      const r = run(["runs", "--json"]);
      expect(r.exitCode, r.stderr).toBe(0);
      return JSON.parse(r.stdout).runs[0] as Record<string, unknown>;
    };
    expect(listed()).toMatchObject({ id, status: "submitted", resumable: false, ok: 2 });

    // Someone cancels the two running tasks.
    spawnSync("scancel", [`${job}_2`, `${job}_3`], { env: { ...process.env, ...env() } });
    const after = await until("the cancelled tasks to show", () => {
      const doc = status();
      const cancelled = doc.pipelines.slice(2).every((p) => p.slurmState === "CANCELLED");
      return states(doc).join() === "done,done,interrupted,interrupted" && cancelled ? doc : undefined;
    });
    expect(after.pipelines.map((p) => p.slurmState)).toEqual([
      "COMPLETED",
      "COMPLETED",
      "CANCELLED",
      "CANCELLED",
    ]);
    expect(listed()).toMatchObject({ id, status: "interrupted", resumable: true, ok: 2 });

    // --resume submits only p2 and p3, follows them, exits 0; p0 and p1 ran once.
    writeFileSync(join(dir, "go"), "");
    const resumed = run(["run", "pipeline.yaml", "--resume", id, "--executor", "slurm", "--ui", "plain"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/submitted 2 pipelines as Slurm job array \d+/);
    expect(resumed.stderr).toMatch(/\[p0\/work cpu\] skipped: completed in an earlier attempt/);
    expect(resumed.stderr).toContain("4 ok, 0 failed");
    expect([0, 1, 2, 3].map((i) => readFileSync(join(dir, `p${i}.count`), "utf8"))).toEqual([
      "run\n",
      "run\n",
      "run\nrun\n",
      "run\nrun\n",
    ]);
    expect(states(status())).toEqual(["done", "done", "done", "done"]);
    expect(listed()).toMatchObject({ id, status: "ok", ok: 4, failed: 0, resumable: false });
    const runDir = join(dir, ".gpuplan/runs", id);
    const events = readFileSync(join(runDir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const e of events) expect(validateEvent(e), JSON.stringify(validateEvent.errors)).toBe(true);
    expect(events.filter((e) => e.event === "slurm.submit").map((e) => e.pipelines)).toEqual([["p2", "p3"]]);
  });

  it("--resume (no --executor: the run's own) goes on from the failed step: completed steps are skipped, the next attempt gets its own logs", async () => {
    const dir = project(
      "from-step",
      [
        "version: 1",
        "name: two-steps",
        "pipelines:",
        "  - name: q{i}",
        "    matrix: { i: [0, 1] }",
        "    steps:",
        "      - { id: a, run: [sh, -c, 'echo run >> q{i}.a'], memory: numpy }",
        "      - { id: b, run: [sh, -c, 'echo run >> q{i}.b; echo b of q{i} >&2; [ {i} = 0 ] || [ -f go ]'], memory: numpy, needs: [a] }",
        "",
      ].join("\n"),
    );
    const run = (args: string[]) => gpuplan(args, { cwd: dir, env: env() });
    // Detached: no follower records anything; the tasks' own journals are all the run has.
    const detached = run(["run", "pipeline.yaml", "--executor", "slurm", "--detach", "--json"]);
    expect(detached.exitCode, detached.stderr).toBe(0);
    const id: string = JSON.parse(detached.stdout).run;
    await until("q0 done and q1 failed", () => {
      const r = run(["status", id, "--json"]);
      const s = (JSON.parse(r.stdout) as { pipelines: { state: string }[] }).pipelines.map((p) => p.state);
      return s.join() === "done,failed" ? s : undefined;
    });
    writeFileSync(join(dir, "go"), "");
    const resumed = run(["run", "--resume", id, "--ui", "plain"]);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toMatch(/submitted 1 pipelines? as Slurm job array \d+/);
    expect(resumed.stderr).toMatch(/\[q1\/a cpu\] skipped: completed in an earlier/);
    expect(resumed.stderr).toContain("4 ok, 0 failed");
    const count = (f: string) => readFileSync(join(dir, f), "utf8");
    expect(["q0.a", "q0.b", "q1.a", "q1.b"].map(count)).toEqual(["run\n", "run\n", "run\n", "run\nrun\n"]);
    // One folder: both attempts of q1/b have their logs in it.
    const runDir = join(".gpuplan/runs", id);
    expect(readdirSync(join(dir, ".gpuplan/runs"))).toEqual([id]);
    expect(count(join(runDir, "logs/q1@b.err.log"))).toBe("b of q1\n");
    expect(count(join(runDir, "logs/q1@b@2.err.log"))).toBe("b of q1\n");
    const events = count(join(runDir, "events.jsonl"))
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const e of events) expect(validateEvent(e), JSON.stringify(validateEvent.errors)).toBe(true);
    expect(events.filter((e) => e.event === "slurm.submit").map((e) => e.pipelines)).toEqual([["q1"]]);
    expect(
      events
        .filter((e) => e.event === "gpu.step.end")
        .map((e) => `${e.pipeline}/${e.step}@${e.attempt} ${e.status}`),
    ).toEqual(["q1/b@2 ok"]);
  });

  it("tasks scancel'd under a followed run fail only their pipelines, with Slurm's state as the reason: exit 1", async () => {
    const dir = project("followed-cancel", GATED);
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "pipeline.yaml", "--executor", "slurm", "--ui", "plain"],
      {
        cwd: dir,
        env: { ...process.env, ...env(), NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    const job = await until("p2 and p3 to run", () => {
      const m = /\[p2\] running on \S+ \(job (\d+)_2\)/.exec(stderr);
      return m && /\[p3\] running on/.test(stderr) ? m[1] : undefined;
    });
    spawnSync("scancel", [`${job}_2`, `${job}_3`], { env: { ...process.env, ...env() } });
    expect(await exited, stderr).toBe(1);
    expect(stderr).toContain("2 ok, 2 failed");
    expect(stderr).toMatch(/✗ p2\/work on cpu: .*\n[\s\S]*hint: Slurm ended task CANCELLED/);
    expect(stderr).toMatch(/\[p3\] failed in Slurm: CANCELLED/);
  });

  it("Ctrl-C of the follower cancels the arrays (scancel), says so, and exits 130", async () => {
    const dir = project("interrupt", GATED);
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "pipeline.yaml", "--executor", "slurm", "--ui", "plain"],
      {
        cwd: dir,
        env: { ...process.env, ...env(), NO_COLOR: "1" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on("exit", (code) => r(code)));
    await until("p2 to run", () => (/\[p2\] running on/.test(stderr) ? true : undefined));
    child.kill("SIGINT");
    expect(await exited).toBe(130);
    expect(stderr).toMatch(/gpuplan: cancelled Slurm job \d+ \(scancel\)/);
    const job = /cancelled Slurm job (\d+)/.exec(stderr)![1]!;
    const left = await until("the tasks to end", () => {
      const r = spawnSync("squeue", ["-h", "-r", "-t", "all", "-j", job, "-o", "%T"], {
        env: { ...process.env, ...env() },
        encoding: "utf8",
      });
      const s = r.stdout.trim().split("\n");
      return s.every((x) => !/PENDING|RUNNING|COMPLETING/.test(x)) ? s : undefined;
    });
    expect(left.filter((s) => s === "CANCELLED").length).toBeGreaterThanOrEqual(2);
  });
});

describe("gpuplan run --executor slurm --dry-run", () => {
  it("prints the sbatch command lines, every task's resources, the sharing mode and the scripts; submits nothing", () => {
    const dir = project(
      "dry",
      GATED.replace("name: gated", "name: gated\nregistry: { executor: { slurm: { partition: debug } } }"),
    );
    const r = gpuplan(
      ["run", "pipeline.yaml", "--executor", "slurm", "--dry-run", "--cpus-per-task", "2", "--mem", "1GiB"],
      {
        cwd: dir,
        env: { SLURM_CONF: "/nonexistent/slurm.conf" },
      },
    );
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^gpuplan run --executor slurm --dry-run: 1 job array for 4 pipelines/);
    expect(r.stdout).toMatch(/\$ sbatch --parsable \S+\/\.gpuplan\/runs\/[^/]+\/slurm\/01-cpu\.sbatch\n/);
    expect(r.stdout).toContain(
      "4 tasks, no GPU; each task: no GRES --cpus-per-task=2 --mem=1024M --time=00:06:00",
    );
    expect(r.stdout).toMatch(/\n\s+3\s+p3\n/);
    expect(r.stdout).toContain("#SBATCH --partition=debug");
    expect(r.stdout).toContain('exec "$NODE" "$GPUPLAN" run "$PLAN" --pipeline "$pipeline" --ui plain');
    expect(existsSync(join(dir, ".gpuplan"))).toBe(false);
  });
});
