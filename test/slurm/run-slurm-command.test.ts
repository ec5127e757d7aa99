// The runner of Slurm's client commands: an interrupt stops a read under way (a hung squeue must
// not hold Ctrl-C for its time limit), while scancel still runs after it. Stand-ins on PATH.
import { chmodSync, existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
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
    // A command that answered is asked again (a failure with an exit status is that call's own).
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
});
