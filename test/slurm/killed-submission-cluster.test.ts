// On the real test cluster: gpuplan killed (kill -9) as sbatch answered left an array in Slurm
// that slurm/jobs.json did not name. The resume finds it by its batch script's path, as
// slurmctld keeps it (`squeue -o %o`: the path, then the script's arguments), records it and is
// refused while it runs; once it is cancelled, the next resume submits the run again.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { gpuplan, hasCrashed } from "../helpers/cli.js";
import { waitForScriptToEnd } from "../helpers/processes.js";
import { sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const dir = realpathSync(mkdtempSync(join(tmpdir(), "gpuplan-slurm-killed-")));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Two pipelines in one array; each waits for the file `go`. */
const GATED = [
  "version: 1",
  "name: killed",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1] }",
  "    steps:",
  "      - { id: work, run: [sh, -c, 'while [ ! -f go ]; do sleep 0.1; done'], memory: numpy, timeout: 5m }",
  "",
].join("\n");

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

async function until<T>(what: string, check: () => T | undefined, timeoutMs = 30_000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const v = check();
    if (v !== undefined) return v;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(200);
  }
}

describe.skipIf(!cluster.ok)("gpuplan killed as the real sbatch answered", () => {
  it("the resume finds the unrecorded array by its script in squeue, records it and submits nothing; once it is cancelled, the next resume submits", async () => {
    if (!cluster.ok) return;
    const env = { ...process.env, SLURM_CONF: cluster.conf };
    const real = spawnSync("sh", ["-c", "command -v sbatch"], { env, encoding: "utf8" }).stdout.trim();
    // sbatch itself, then — where the file `kill` is there — SIGKILL to the gpuplan that called it.
    const bin = join(dir, "bin");
    mkdirSync(bin);
    writeFileSync(
      join(bin, "sbatch"),
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); echo "sbatch $*" >> "$d/calls"',
        `out=$('${real}' "$@"); rc=$?; echo "$out"`,
        '[ -e "$d/kill" ] && rm "$d/kill" && kill -9 $PPID && sleep 1',
        'exit "$rc"',
        "",
      ].join("\n"),
    );
    chmodSync(join(bin, "sbatch"), 0o755);
    writeFileSync(join(dir, "pipeline.yaml"), GATED);
    const run = (args: string[]) =>
      gpuplan(args, { cwd: dir, env: { SLURM_CONF: cluster.conf, PATH: `${bin}:${process.env.PATH}` } });
    const sbatchCalls = () =>
      existsSync(join(bin, "calls")) ? readFileSync(join(bin, "calls"), "utf8").trim().split("\n") : [];
    const jobs: string[] = [];
    try {
      writeFileSync(join(bin, "kill"), "");
      const killed = run(["run", "pipeline.yaml", "--executor", "slurm", "--detach"]);
      expect(killed.exitCode, killed.stderr).toBe(-1);
      const [id] = readdirSync(join(dir, ".gpuplan/runs"));
      const runDir = join(dir, ".gpuplan/runs", id!);
      expect(existsSync(join(runDir, "slurm/jobs.json"))).toBe(false);
      const listed = spawnSync("squeue", ["--me", "-h", "-o", "%F|%o"], { env, encoding: "utf8" }).stdout;
      const job = new RegExp(`^([0-9]+)\\|${runDir}/slurm/01-cpu\\.sbatch( |$)`, "m").exec(listed)?.[1];
      expect(job, listed).toBeDefined();
      jobs.push(job!);

      // The wrapper the kill left running (its `sleep 1`) ends first: a resume is refused while an
      // sbatch of the run runs (test/slurm/killed-submission.test.ts).
      waitForScriptToEnd(join(bin, "sbatch"));
      const refused = run(["run", "--resume", id!, "--executor", "slurm", "--detach"]);
      expect(hasCrashed(refused), refused.stderr).toBe(false);
      expect(refused.exitCode, refused.stderr).toBe(2);
      expect(refused.stderr).toContain("[slurm-run-active]");
      expect(refused.stderr).toContain(
        `array ${job} of the submission gpuplan was stopped in was found in Slurm`,
      );
      expect(sbatchCalls()).toHaveLength(1);
      const record = JSON.parse(readFileSync(join(runDir, "slurm/jobs.json"), "utf8"));
      expect(record.arrays).toEqual([{ job, script: "01-cpu.sbatch", pipelines: ["p0", "p1"] }]);

      spawnSync("scancel", [job!], { env });
      await until("the cancelled array to leave squeue", () =>
        spawnSync("squeue", ["-h", "-j", job!], { env, encoding: "utf8" }).stdout.trim() === ""
          ? true
          : undefined,
      );
      const resumed = run(["run", "--resume", id!, "--executor", "slurm", "--detach", "--json"]);
      expect(resumed.exitCode, resumed.stderr).toBe(0);
      const again: string = JSON.parse(resumed.stdout).jobs[0].job;
      jobs.push(again);
      expect(sbatchCalls()).toHaveLength(2);
      writeFileSync(join(dir, "go"), "");
      await until("the resumed array to complete", () => {
        const r = run(["status", id!, "--json"]);
        const states = (JSON.parse(r.stdout) as { pipelines: { state: string }[] }).pipelines.map(
          (p) => p.state,
        );
        return states.join() === "done,done" ? true : undefined;
      });
    } finally {
      if (jobs.length > 0) spawnSync("scancel", jobs, { env });
    }
  });
});
