// A task that was interrupted (preempted) wrote its run.end, and Slurm requeued it (--requeue):
// squeue says it is PENDING again, then RUNNING. `gpuplan status` and `gpuplan runs` said
// `interrupted` (runs offered a resume that Slurm's queued task would then refuse) until the new
// run wrote a new end. Now what Slurm says of a queued task wins, a run.start after the end says
// the task runs again, and an interrupted end with nothing queued stands as before. Fake
// sbatch/squeue on PATH; the task's events written by hand.
import { chmodSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import validateRuns from "../../src/generated/runs-validator.js";
import validateStatus from "../../src/generated/slurm-run-status-validator.js";
import { gpuplan, tempDir } from "../helpers/cli.js";
import { NO_GPU } from "../report/helpers/runs.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

function command(bin: string, name: string, script: string): void {
  writeFileSync(join(bin, name), `#!/bin/sh\n${script}\n`);
  chmodSync(join(bin, name), 0o755);
}

const line = (event: string, status?: string) =>
  `${JSON.stringify({ ts: new Date().toISOString(), event, ...(status && { status }) })}\n`;

/** A detached Slurm run of two pipelines (job 4242): well-b's task ended ok, well-a's was interrupted. */
function interruptedTask() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const bin = join(t.dir, "bin");
  mkdirSync(bin);
  writeFileSync(
    join(t.dir, "p.yaml"),
    "version: 1\nname: s\npipelines:\n  - name: well-{w}\n    matrix: { w: [a, b] }\n    steps:\n      - { id: m, run: [sleep, '1'], memory: numpy }\n",
  );
  const env = { ...NO_GPU, GPUPLAN_LOCK_DIR: join(t.dir, "locks"), PATH: bin };
  command(bin, "sbatch", "echo 4242");
  const submit = gpuplan(["run", "p.yaml", "--executor", "slurm", "--detach", "--requeue"], {
    cwd: t.dir,
    env,
  });
  expect(submit.exitCode, submit.stderr).toBe(0);
  const [id] = readdirSync(join(t.dir, ".gpuplan/runs"));
  const events = join(t.dir, ".gpuplan/runs", id!, "slurm/events");
  writeFileSync(join(events, "4242_0.jsonl"), line("run.start") + line("run.end", "interrupted"));
  writeFileSync(join(events, "4242_1.jsonl"), line("run.start") + line("run.end", "ok"));
  const squeue = (a: string) =>
    command(bin, "squeue", `echo '4242_0|${a}|'; echo '4242_1|COMPLETED|None|n1|0|4244|'`);
  const status = () => {
    const r = gpuplan(["status", id!, "--json"], { cwd: t.dir, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(validateStatus(doc), JSON.stringify(validateStatus.errors)).toBe(true);
    return doc.pipelines.map((p: { pipeline: string; state: string }) => `${p.pipeline} ${p.state}`);
  };
  const runs = () => {
    const r = gpuplan(["runs", "--json"], { cwd: t.dir, env });
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(validateRuns(doc), JSON.stringify(validateRuns.errors)).toBe(true);
    return doc.runs[0];
  };
  return { bin, events, squeue, status, runs };
}

describe("a Slurm task requeued after it said it was interrupted", () => {
  it.each([
    "PENDING|BeginTime|(null)|0|4243",
    "REQUEUED|None|n2|0|4243",
    "REQUEUE_HOLD|JobHeldUser|(null)|0|4243",
  ])("reads pending while squeue says %s, and its run is not offered for a resume", (said) => {
    const f = interruptedTask();
    f.squeue(said);
    expect(f.status()).toEqual(["well-a pending", "well-b done"]);
    expect(f.runs()).toMatchObject({
      status: "submitted",
      resumable: false,
      problem: expect.stringContaining("1 of its 2 pipelines is queued or running on Slurm"),
    });
  });

  it("reads running once its new run has started recording, and by its new end once it wrote one", () => {
    const f = interruptedTask();
    writeFileSync(
      join(f.events, "4242_0.jsonl"),
      line("run.start") + line("run.end", "interrupted") + line("run.start"),
    );
    f.squeue("RUNNING|None|n2|0|4243");
    expect(f.status()).toEqual(["well-a running", "well-b done"]);
    expect(f.runs()).toMatchObject({ status: "submitted", resumable: false });
    writeFileSync(
      join(f.events, "4242_0.jsonl"),
      line("run.start") + line("run.end", "interrupted") + line("run.start") + line("run.end", "ok"),
    );
    f.squeue("COMPLETED|None|n2|0|4243");
    expect(f.status()).toEqual(["well-a done", "well-b done"]);
    expect(f.runs()).toMatchObject({ status: "ok" });
  });

  it("an interrupted task Slurm did not requeue stays interrupted, as it does where Slurm cannot be asked", () => {
    const f = interruptedTask();
    f.squeue("PREEMPTED|None|n2|0|4243");
    expect(f.status()).toEqual(["well-a interrupted", "well-b done"]);
    expect(f.runs()).toMatchObject({ status: "interrupted", resumable: true });
    // A squeue that fails (the controller down), or none on PATH (the folder copied to a
    // workstation): the tasks' own account stands. Where it fails, no resume is offered: the
    // resume asks squeue first and would be refused; with none on PATH a resume here goes on.
    command(f.bin, "squeue", "echo 'slurm_load_jobs error: Unable to contact slurm controller' >&2; exit 1");
    expect(f.runs()).toMatchObject({ status: "interrupted", resumable: false });
    rmSync(join(f.bin, "squeue"));
    expect(f.runs()).toMatchObject({ status: "interrupted", resumable: true });
  });
});
