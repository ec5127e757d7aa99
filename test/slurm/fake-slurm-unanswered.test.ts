// When Slurm does not answer, `gpuplan runs` and `gpuplan report` say so within a short bound
// (QUESTION_TIMEOUT_MS, 15 s) and take the run's status from its files, and `runs` offers no
// resume that `gpuplan run --resume` (which asks Slurm first) would refuse. Stand-ins first on
// PATH: each prints FAKE/NAME.out, sleeps FAKE/NAME.sleep seconds and exits with FAKE/NAME.rc.
import { spawn } from "node:child_process";
import { chmodSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import validateEvent from "../../src/generated/run-events-validator.js";
import { QUESTION_TIMEOUT_MS } from "../../src/slurm/run-slurm-command.js";
import { gpuplan, hasCrashed, ROOT } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-fake-slurm-unanswered-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fake = join(dir, "fake-bin");
const env = { PATH: `${fake}:${process.env.PATH}`, SLURM_CONF: "/nonexistent", NO_COLOR: "1" };

const PIPELINE = [
  "version: 1",
  "name: quiet",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1] }",
  "    steps: [{ id: a, run: [sh, -c, 'true'], memory: numpy, timeout: 2m }]",
  "",
].join("\n");

function answer(name: string, { out = "", rc = 0, sleep = 0 } = {}, bin = fake): void {
  writeFileSync(join(bin, `${name}.out`), out);
  writeFileSync(join(bin, `${name}.rc`), String(rc));
  writeFileSync(join(bin, `${name}.sleep`), String(sleep));
}

const run = (args: string[]) => gpuplan(args, { cwd: dir, env });

/** The CLI run in the background, for commands that run at once (each would wait its own bound). */
function started(
  args: string[],
  more: Record<string, string> = {},
  /** Interrupts it (SIGINT) once its stderr says this: a follower goes on until then. */
  until?: string,
): Promise<{ exitCode: number; stdout: string; stderr: string; ms: number; saidMs: number | null }> {
  const t0 = Date.now();
  const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), ...args], {
    cwd: dir,
    env: { ...process.env, ...env, ...more },
  });
  let saidMs: number | null = null;
  let stdout = "";
  let stderr = "";
  child.stdout.on("data", (d) => {
    stdout += d;
  });
  child.stderr.on("data", (d) => {
    stderr += d;
    if (until !== undefined && saidMs === null && stderr.includes(until)) {
      saidMs = Date.now() - t0;
      child.kill("SIGINT");
    }
  });
  // Far past the bound, well short of the minute it used to wait.
  const killer = setTimeout(() => child.kill("SIGKILL"), 40_000);
  return new Promise((resolve) =>
    child.on("close", (code) => {
      clearTimeout(killer);
      resolve({ exitCode: code ?? -1, stdout, stderr, ms: Date.now() - t0, saidMs });
    }),
  );
}

/** Stand-ins in `bin`, each answering as its NAME.out, NAME.rc and NAME.sleep there say. */
function makeFakes(bin: string): void {
  mkdirSync(bin);
  for (const name of ["squeue", "sbatch", "sacct", "scancel"]) {
    const file = join(bin, name);
    writeFileSync(
      file,
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); n=$(basename "$0")',
        's=$(cat "$d/$n.sleep" 2>/dev/null || echo 0)',
        // exec: the time limit's SIGTERM reaches the sleeper itself, as it would a hung squeue.
        '[ "$s" != 0 ] && exec sleep "$s"',
        'cat "$d/$n.out" 2>/dev/null',
        'exit "$(cat "$d/$n.rc" 2>/dev/null || echo 0)"',
        "",
      ].join("\n"),
    );
    chmodSync(file, 0o755);
    answer(name, {}, bin);
  }
}

beforeAll(() => {
  makeFakes(fake);
  writeFileSync(join(dir, "pipeline.yaml"), PIPELINE);
  expect(run(["compile", "pipeline.yaml", "--target", "cpu-only", "-o", "plan.json"]).exitCode).toBe(0);
});

/** A run submitted with --detach (and `extra`), sbatch answering job 4242: its id. */
function detached(extra: string[] = []): string {
  answer("sbatch", { out: "4242\n" });
  const r = run(["run", "plan.json", "--executor", "slurm", "--detach", "--json", ...extra]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).run;
}

describe("a squeue that hangs", () => {
  it(`runs and report wait ${QUESTION_TIMEOUT_MS / 1000} s, not a minute, say so, and runs offers no resume`, async () => {
    const id = detached();
    answer("squeue", { sleep: 120 });
    answer("sacct", { sleep: 120 });
    try {
      const [runs, report] = await Promise.all([
        started(["runs", "--json"]),
        started(["report", id, "-o", join(dir, "report.html")]),
      ]);
      for (const r of [runs, report]) {
        expect(r.exitCode, r.stderr).toBe(0);
        expect(r.ms).toBeLessThan(QUESTION_TIMEOUT_MS + 10_000);
      }
      const listed = JSON.parse(runs.stdout).runs.find((r: { id: string }) => r.id === id);
      expect(listed.status).toBe("submitted");
      expect(listed.problem).toContain(`did not answer in ${QUESTION_TIMEOUT_MS / 1000} s`);
      expect(listed.problem).toContain("from its files only");
      expect(listed.resumable).toBe(false);
      expect(listed.resume).toBeNull();
      expect(report.stderr).toContain(`did not answer in ${QUESTION_TIMEOUT_MS / 1000} s`);
    } finally {
      answer("squeue");
      answer("sacct");
    }
  }, 60_000);
});

describe("a squeue that fails", () => {
  it("a submitted run is not offered for resume: the resume would be refused the same way", () => {
    const id = detached();
    answer("squeue", { rc: 1 });
    const listed = JSON.parse(run(["runs", "--json"]).stdout).runs.find((r: { id: string }) => r.id === id);
    expect(listed.status).toBe("submitted");
    expect(listed.resumable).toBe(false);
    const resume = run(["run", "--resume", id, "--executor", "slurm", "--detach"]);
    expect(hasCrashed(resume), resume.stderr).toBe(false);
    expect(resume.exitCode).toBe(2);
    expect(resume.stderr).toContain("[slurm-command-failed]");
    answer("squeue");
  });

  it("tasks that said they were interrupted, in an array that may requeue: their status stands, no resume is offered", () => {
    const id = detached(["--requeue"]);
    for (const t of [0, 1])
      writeFileSync(
        join(dir, ".gpuplan/runs", id, "slurm/events", `4242_${t}.jsonl`),
        `${JSON.stringify({ ts: `2026-11-27T10:00:0${t}.000Z`, event: "run.end", run: id, pipeline: null, step: null, device: null, status: "interrupted" })}\n`,
      );
    answer("squeue", { rc: 1 });
    const r = run(["runs", "--json"]);
    const listed = JSON.parse(r.stdout).runs.find((x: { id: string }) => x.id === id);
    expect(listed.status).toBe("interrupted");
    expect(listed.resumable).toBe(false);
    expect(listed.problem).toContain(
      "Slurm could not be asked whether a task that said it was interrupted was requeued",
    );
    const resume = run(["run", "--resume", id, "--executor", "slurm", "--detach"]);
    expect(resume.exitCode).toBe(2);
    // Once Slurm answers (and holds none of its tasks), the resume is offered again.
    answer("squeue");
    const after = JSON.parse(run(["runs", "--json"]).stdout).runs.find((x: { id: string }) => x.id === id);
    expect(after.resumable).toBe(true);
  });
});

describe("Slurm not answering the follower, or status and runs --prune after squeue answered", () => {
  // Each case waits out one bound; they run at once, the follower of each against stand-ins of
  // its own: one where squeue hangs, one where squeue lists nothing (the tasks forgotten) and
  // sacct hangs. status and runs --prune use the second.
  const hungSqueue = join(dir, "fake-hung-squeue");
  const hungSacct = join(dir, "fake-hung-sacct");
  const path = (bin: string) => ({ PATH: `${bin}:${process.env.PATH}` });

  it(`the follower says within ${QUESTION_TIMEOUT_MS / 1000} s that squeue or sacct did not answer (stderr, a slurm.unanswered event); status and runs --prune say sacct did not answer, not 'no record'`, async () => {
    makeFakes(hungSqueue);
    makeFakes(hungSacct);
    answer("sbatch", { out: "4343\n" }, hungSqueue);
    answer("squeue", { sleep: 120 }, hungSqueue);
    answer("sbatch", { out: "4444\n" }, hungSacct);
    answer("sacct", { sleep: 120 }, hungSacct);
    const detachedRun = gpuplan(["run", "plan.json", "--executor", "slurm", "--detach", "--json"], {
      cwd: dir,
      env: { ...env, ...path(hungSacct) },
    });
    expect(detachedRun.exitCode, detachedRun.stderr).toBe(0);
    const id = JSON.parse(detachedRun.stdout).run as string;
    const follow = (bin: string, events: string, until: string) =>
      started(
        ["run", "plan.json", "--executor", "slurm", "--ui", "plain", "--events", join(dir, events)],
        path(bin),
        until,
      );
    const [squeueRun, sacctRun, status, prune] = await Promise.all([
      follow(hungSqueue, "hung-squeue.jsonl", "squeue did not answer"),
      follow(hungSacct, "hung-sacct.jsonl", "sacct did not answer"),
      started(["status", id], path(hungSacct)),
      started(["runs", "--prune", "--keep", "0"], path(hungSacct)),
    ]);
    for (const [r, command] of [
      [squeueRun, "squeue"],
      [sacctRun, "sacct"],
    ] as const) {
      expect(r.saidMs, r.stderr).not.toBeNull();
      // One bound (and the polls before sacct is asked), not the minute it used to wait unsaid.
      expect(r.saidMs!).toBeLessThan(QUESTION_TIMEOUT_MS + 10_000);
      expect(r.stderr).toContain(`${command} did not answer in ${QUESTION_TIMEOUT_MS / 1000} s`);
      const events = readFileSync(join(dir, `hung-${command}.jsonl`), "utf8")
        .split("\n")
        .filter((l) => l !== "")
        .map((l) => JSON.parse(l));
      const said = events.filter((e) => e.event === "slurm.unanswered");
      expect(said).toHaveLength(1);
      expect(said[0].command).toBe(command);
      for (const e of events) expect(validateEvent(e), JSON.stringify(validateEvent.errors)).toBe(true);
    }
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toContain(`sacct did not answer in ${QUESTION_TIMEOUT_MS / 1000} s`);
    expect(prune.stderr).toContain(`sacct did not answer in ${QUESTION_TIMEOUT_MS / 1000} s`);
    expect(prune.stderr).not.toContain("sacct has no record");
  }, 60_000);
});
