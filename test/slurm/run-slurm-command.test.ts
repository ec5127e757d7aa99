// The runner of Slurm's client commands: an interrupt stops a read under way (a hung squeue must
// not hold Ctrl-C for its time limit), while scancel still runs after it. Stand-ins on PATH.
import { chmodSync, existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { sacctTaskStates } from "../../src/slurm/follow/sacct-tasks.js";
import { rememberUnanswered, slurmCommandRunner } from "../../src/slurm/run-slurm-command.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-slurm-runner-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
writeFileSync(join(dir, "squeue"), "#!/bin/sh\nexec sleep 30\n");
writeFileSync(join(dir, "scancel"), `#!/bin/sh\necho "$@" > "${dir}/cancelled"\n`);
for (const f of ["squeue", "scancel"]) chmodSync(join(dir, f), 0o755);
const env = { PATH: `${dir}:${process.env.PATH}` };

describe("slurmCommandRunner with an interrupt", () => {
  it("a hung squeue is stopped by the interrupt at once, and scancel still runs after it", async () => {
    const interrupt = new AbortController();
    const run = slurmCommandRunner(env, 60_000, interrupt.signal);
    const started = Date.now();
    setTimeout(() => interrupt.abort(new Error("interrupted by SIGINT")), 200);
    const out = await run("squeue", ["-h"]);
    expect(Date.now() - started).toBeLessThan(5000);
    expect(out).toMatchObject({ status: null, failure: "interrupted" });
    expect(await run("squeue", ["-h"])).toMatchObject({ failure: "interrupted" });
    expect((await run("scancel", ["7"])).status).toBe(0);
    expect(existsSync(join(dir, "cancelled"))).toBe(true);
  });
});

describe("rememberUnanswered", () => {
  it("sacct -X failing (accounting storage disabled) still lets its fallback, the completion log (sacct -c), be asked", async () => {
    const asked: string[] = [];
    const slurm = rememberUnanswered(async (command, args) => {
      asked.push(`${command} ${args.join(" ")}`);
      if (args.includes("-X"))
        return { status: 1, stdout: "", stderr: "sacct: error: Slurm accounting storage is disabled\n" };
      return { status: 0, stdout: "4243|TIMEOUT|0:0|node3\n", stderr: "" };
    });
    const { states: found } = await sacctTaskStates(slurm, [{ name: "4242_0", rawJob: "4243" }]);
    expect(asked.map((a) => a.split(" -j")[0])).toEqual(["sacct -n -P -X", "sacct -c -n -P"]);
    expect(found.get("4242_0")).toMatchObject({ state: "TIMEOUT" });
    // The same question of other jobs is not asked again.
    await sacctTaskStates(slurm, [{ name: "4250_0", rawJob: "4251" }]);
    expect(asked.filter((a) => a.includes("-X"))).toHaveLength(1);
  });

  it("a command past its time limit is asked once, its answer given to every later call; others are asked each time", async () => {
    const runner = slurmCommandRunner(env, 300);
    let asked = 0;
    const run = rememberUnanswered((command, args) => {
      asked++;
      return runner(command, args);
    });
    const first = await run("squeue", ["-j", "1"]);
    expect(first.failure).toBe("timeout");
    expect(await run("squeue", ["-j", "2"])).toBe(first);
    expect(asked).toBe(1);
    // A command that answered is asked again, as is one that acts (scancel: each failure is its own).
    await run("scancel", ["7"]);
    await run("scancel", ["8"]);
    expect(asked).toBe(3);
  });

  it("calls made while the first is under way wait for its answer: runs read at once wait out one limit, not one each", async () => {
    const runner = slurmCommandRunner(env, 300);
    let asked = 0;
    const run = rememberUnanswered((command, args) => {
      asked++;
      return runner(command, args);
    });
    const started = Date.now();
    const outs = await Promise.all([1, 2, 3, 4].map((j) => run("squeue", ["-j", String(j)])));
    expect(outs.map((o) => o.failure)).toEqual(["timeout", "timeout", "timeout", "timeout"]);
    expect(asked).toBe(1);
    expect(Date.now() - started).toBeLessThan(5000);
    // Once the first answered, the others run side by side: scancel answers, so each call is its own.
    await Promise.all([run("scancel", ["7"]), run("scancel", ["8"]), run("scancel", ["9"])]);
    expect(asked).toBe(4);
  });

  it("a read that fails with an exit status (the controller down) is asked once; squeue's forgotten job id each time", async () => {
    const counted = join(dir, "counted");
    writeFileSync(join(dir, "count"), `#!/bin/sh\necho "$1" >> "${counted}"\necho "$2" >&2\nexit 1\n`);
    chmodSync(join(dir, "count"), 0o755);
    const runner = slurmCommandRunner(env, 60_000);
    const asked: string[] = [];
    // Each Slurm command is the one fake, told what to say: the command name goes first.
    const run = rememberUnanswered((command, args) => {
      asked.push(command);
      return runner("count", [command, ...args]);
    });
    const down = "slurm_load_jobs error: Unable to contact slurm controller (connect failure)";
    const outs = await Promise.all([1, 2, 3].map(() => run("squeue", [down])));
    expect(outs.map((o) => o.status)).toEqual([1, 1, 1]);
    expect(outs[1]!.stderr).toContain("Unable to contact slurm controller");
    expect(await run("squeue", [down])).toBe(outs[0]);
    expect(asked).toEqual(["squeue"]);
    const disabled = "sacct: error: Slurm accounting storage is disabled";
    await run("sacct", [disabled]);
    await run("sacct", [disabled]);
    expect(asked).toEqual(["squeue", "sacct"]);
    // A job Slurm forgot is that call's answer: the next squeue is asked again.
    const forgot = "slurm_load_jobs error: Invalid job id specified";
    const scontrol = rememberUnanswered((command, args) => {
      asked.push(command);
      return runner("count", [command, ...args]);
    });
    await scontrol("squeue", [forgot]);
    await scontrol("squeue", [forgot]);
    // scancel acts: its failure is that call's own.
    await scontrol("scancel", ["scancel: error: Kill job error on job id 7: Invalid job id specified"]);
    await scontrol("scancel", ["no"]);
    expect(asked).toEqual(["squeue", "sacct", "squeue", "squeue", "scancel", "scancel"]);
    expect(readFileSync(counted, "utf8").trim().split("\n")).toHaveLength(6);
  });
});
