// What gpuplan does when Slurm's client commands misbehave, against stand-ins first on PATH (no
// cluster needed): a squeue that fails makes status and --resume stop rather than take the run's
// tasks as gone; a resume here (--executor local) is refused while tasks of the run are still in
// Slurm; an sbatch that prints a notice before the job id is read right, and one that prints no
// job id says so. Each stand-in prints FAKE/NAME.out and FAKE/NAME.err and exits with FAKE/NAME.rc.
import { execFileSync, spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import validateRunEvent from "../../src/generated/run-events-validator.js";
import validateSlurmDryRun from "../../src/generated/slurm-dry-run-validator.js";
import validateStatus from "../../src/generated/slurm-run-status-validator.js";
import { gpuplan, hasCrashed, ROOT } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-fake-slurm-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fake = join(dir, "fake-bin");

const NODE = {
  gpus: [{ name: "NVIDIA H100 80GB HBM3", memory: 85520809984, count: 4, compute_capability: "9.0" }],
  cpu: { threads: 16, memory: "16000MiB" },
  slurm: {
    node_type: "h100x4-16cpu-16000mib",
    gres: [{ model: "NVIDIA H100 80GB HBM3", type: "h100", count: 4 }],
  },
};

const PIPELINE = [
  "version: 1",
  "name: fake",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1] }",
  "    steps: [{ id: a, run: [sh, -c, 'echo run >> p{i}.count'], memory: numpy, timeout: 2m }]",
  "",
].join("\n");

/** What the stand-in `name` prints and how it exits; every call is appended to FAKE/calls. */
function answer(name: string, out: string, rc: number | "KILL" = 0, err = ""): void {
  writeFileSync(join(fake, `${name}.out`), out);
  writeFileSync(join(fake, `${name}.err`), err);
  writeFileSync(join(fake, `${name}.rc`), String(rc));
}

const calls = (): string[] =>
  existsSync(join(fake, "calls")) ? readFileSync(join(fake, "calls"), "utf8").trim().split("\n") : [];

const run = (args: string[]) =>
  gpuplan(args, { cwd: dir, env: { PATH: `${fake}:${process.env.PATH}`, SLURM_CONF: "/nonexistent" } });

beforeAll(() => {
  mkdirSync(fake);
  for (const name of ["squeue", "sbatch", "sacct", "scancel"]) {
    const file = join(fake, name);
    writeFileSync(
      file,
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); n=$(basename "$0")',
        'echo "$n $*" >> "$d/calls"',
        'cat "$d/$n.out" 2>/dev/null',
        'cat "$d/$n.err" >&2 2>/dev/null',
        'rc=$(cat "$d/$n.rc" 2>/dev/null || echo 0)',
        // KILL: the command dies of a signal (no exit status of its own).
        '[ "$rc" = KILL ] && kill -9 $$',
        'exit "$rc"',
        "",
      ].join("\n"),
    );
    chmodSync(file, 0o755);
    answer(name, "");
  }
  writeFileSync(join(dir, "pipeline.yaml"), PIPELINE);
  writeFileSync(join(dir, "node.json"), JSON.stringify(NODE));
  expect(run(["compile", "pipeline.yaml", "--inventory", "node.json", "-o", "plan.json"]).exitCode).toBe(0);
});

/** A run submitted with --detach, sbatch answering `sbatchOut`: its id. */
function detached(sbatchOut = "4242\n"): string {
  answer("sbatch", sbatchOut);
  const r = run(["run", "plan.json", "--executor", "slurm", "--detach", "--json"]);
  expect(r.exitCode, r.stderr).toBe(0);
  return JSON.parse(r.stdout).run;
}

/** `text` as one sh word. */
const shq = (text: string): string => `'${text.replaceAll("'", "'\\''")}'`;

const SQUEUE_FAILS =
  "squeue: error: slurm_load_jobs error: Socket timed out on send/recv operation\x1b]0;PWNED\x07";

describe("a squeue that fails", () => {
  it("status says squeue failed, with what it printed (escaped), and exits 2 — never 'unknown'", () => {
    const id = detached();
    answer("squeue", "", 1, SQUEUE_FAILS);
    for (const args of [
      ["status", id],
      ["status", id, "--json"],
    ]) {
      const r = run(args);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stdout).not.toContain("unknown");
      expect(`${r.stdout}${r.stderr}`).toContain("slurm_load_jobs error: Socket timed out");
      expect(`${r.stdout}${r.stderr}`).toContain("slurm-command-failed");
      expect(`${r.stdout}${r.stderr}`).not.toContain("\x1b]0;PWNED");
    }
    answer("squeue", "");
  });

  it("--resume submits nothing while squeue cannot say whether the run's tasks are still queued", () => {
    const id = detached();
    answer("squeue", "", 1, SQUEUE_FAILS);
    rmSync(join(fake, "calls"));
    const r = run(["run", "--resume", id, "--executor", "slurm", "--detach"]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("cannot tell which of the run's tasks are still queued or running");
    expect(calls().filter((c) => c.startsWith("sbatch"))).toEqual([]);
    answer("squeue", "");
  });

  it("a squeue that lists the run's tasks still pending: status says pending (the reading still works)", () => {
    const id = detached();
    answer(
      "squeue",
      "4242_0|PENDING|JobHeldUser|(null)|0|4243|\n4242_1|PENDING|JobHeldUser|(null)|0|4244|\n",
    );
    const r = run(["status", id, "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(validateStatus(doc), JSON.stringify(validateStatus.errors)).toBe(true);
    expect(doc.pipelines.map((p: { state: string }) => p.state)).toEqual(["pending", "pending"]);
    answer("squeue", "");
  });
});

describe("a task's own account (its events' run.end) is outside text", () => {
  it("a status other than ok, failed or interrupted is no ending: never shown raw, --json stays in its schema", () => {
    const id = detached();
    answer("squeue", "4242_0|RUNNING|None|node3|0|4243|\n4242_1|RUNNING|None|node3|0|4244|\n");
    const events = join(dir, ".gpuplan/runs", id, "slurm/events");
    const end = (status: unknown) =>
      `${JSON.stringify({ ts: "2026-11-27T10:00:00.000Z", event: "run.end", run: id, pipeline: null, step: null, device: null, status })}\n`;
    writeFileSync(join(events, "4242_0.jsonl"), end("\u001b]0;PWNED\u0007"));
    writeFileSync(join(events, "4242_1.jsonl"), `null\n${end({ a: 1 })}`);
    const text = run(["status", id]);
    expect(hasCrashed(text), text.stderr).toBe(false);
    expect(text.exitCode, text.stderr).toBe(0);
    expect(text.stdout).not.toContain("\u001b");
    expect(text.stdout).toContain("2 running");
    const json = run(["status", id, "--json"]);
    expect(json.exitCode, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(validateStatus(doc), JSON.stringify(validateStatus.errors)).toBe(true);
    expect(doc.pipelines.map((p: { state: string }) => p.state)).toEqual(["running", "running"]);
    answer("squeue", "");
  });
});

describe("what squeue prints is outside text", () => {
  it("status --json keeps a C1 control (U+009B, CSI) of a reason or node list escaped, and the value", () => {
    const id = detached();
    answer("squeue", "4242_0|PENDING|a\u009b2Jb|(null)|0|4243|\n4242_1|RUNNING|None|n\u009b31mode|0|4244|\n");
    const r = run(["status", id, "--json"]);
    answer("squeue", "");
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/[\u007f-\u009f]/);
    const doc = JSON.parse(r.stdout);
    expect(validateStatus(doc), JSON.stringify(validateStatus.errors)).toBe(true);
    expect(doc.pipelines.map((p: { reason: string | null }) => p.reason)).toEqual(["a\u009b2Jb", null]);
    expect(doc.pipelines.map((p: { node: string | null }) => p.node)).toEqual([null, "n\u009b31mode"]);
  });
});

describe("a run with many arrays (resumed many times)", () => {
  it("status asks squeue in parts: 20,000 job ids are no spawn E2BIG", () => {
    const id = detached();
    const jobs = join(dir, ".gpuplan/runs", id, "slurm/jobs.json");
    const arrays = Array.from({ length: 20_000 }, (_, i) => ({
      job: String(5_000_000 + i),
      script: "01-cpu.sbatch",
      pipelines: [i % 2 === 0 ? "p0" : "p1"],
    }));
    writeFileSync(jobs, JSON.stringify({ schema: "gpuplan/slurm-run@1", arrays }));
    answer("squeue", "5019999_0|RUNNING|None|node3|0|5019999|");
    rmSync(join(fake, "calls"), { force: true });
    const r = run(["status", id, "--json"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).pipelines.map((p: { state: string }) => p.state)).toEqual([
      "unknown",
      "running",
    ]);
    expect(calls().filter((c) => c.startsWith("squeue")).length).toBe(20);
    answer("squeue", "");
  });
});

describe("--resume RUN --executor local of a Slurm run", () => {
  it("is refused while tasks of the run are still in Slurm (slurm-run-active), and nothing runs here", () => {
    const id = detached();
    answer("squeue", "4242_0|RUNNING|None|node3|0|4243|\n4242_1|PENDING|Priority|(null)|0|4244|\n");
    const r = run(["run", "--resume", id, "--executor", "local", "--ui", "plain"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("[slurm-run-active]");
    expect(r.stderr).toContain("4242_0 RUNNING");
    expect(existsSync(join(dir, "p0.count"))).toBe(false);
    // squeue failing: refused too.
    answer("squeue", "", 1, SQUEUE_FAILS);
    const failing = run(["run", "--resume", id, "--executor", "local", "--ui", "plain"]);
    expect(failing.exitCode, failing.stderr).toBe(2);
    expect(failing.stderr).toContain("[slurm-command-failed]");
    expect(existsSync(join(dir, "p0.count"))).toBe(false);
    // Once Slurm holds none of them, it runs here.
    answer("squeue", "4242_0|CANCELLED|None|node3|0|4243|\n4242_1|CANCELLED|None|(null)|0|4244|\n");
    const here = run(["run", "--resume", id, "--executor", "local", "--ui", "plain"]);
    expect(here.exitCode, here.stderr).toBe(0);
    expect(readFileSync(join(dir, "p0.count"), "utf8")).toBe("run\n");
    rmSync(join(dir, "p0.count"));
    rmSync(join(dir, "p1.count"));
    answer("squeue", "");
  });
});

describe("two --resume of one Slurm run at once", () => {
  /**
   * A resume of a detached run whose squeue starts `inner` (another gpuplan on the run) and waits
   * for it to end (no clock decides the order), then says the run's tasks were cancelled; the
   * inner one's squeue (the marker made) only says that. sbatch answers 4343.
   */
  const whileFirstAsksSqueue = (inner: (id: string) => string) => {
    const id = detached();
    const squeue = join(fake, "squeue");
    const original = readFileSync(squeue);
    const mark = join(dir, "inner");
    writeFileSync(
      squeue,
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); echo "squeue $*" >> "$d/calls"',
        `if [ ! -e ${shq(`${mark}.started`)} ]; then`,
        `  : > ${shq(`${mark}.started`)}`,
        `  ${shq(process.execPath)} ${shq(join(ROOT, "bin/gpuplan.js"))} ${inner(id)} > ${shq(`${mark}.out`)} 2> ${shq(`${mark}.err`)}`,
        `  echo $? > ${shq(`${mark}.rc`)}`,
        "fi",
        "printf '4242_0|CANCELLED|None|node3|0|4243|\\n4242_1|CANCELLED|None|(null)|0|4244|\\n'",
        "",
      ].join("\n"),
    );
    answer("sbatch", "4343\n");
    rmSync(join(fake, "calls"), { force: true });
    try {
      const outer = run(["run", "--resume", id, "--executor", "slurm", "--detach"]);
      expect(hasCrashed(outer), outer.stderr).toBe(false);
      const second = {
        rc: Number(readFileSync(`${mark}.rc`, "utf8").trim()),
        stdout: readFileSync(`${mark}.out`, "utf8"),
        stderr: readFileSync(`${mark}.err`, "utf8"),
      };
      const doc = JSON.parse(readFileSync(join(dir, ".gpuplan/runs", id, "slurm/jobs.json"), "utf8"));
      return { id, outer, second, jobs: doc.arrays.map((a: { job: string }) => a.job) as string[] };
    } finally {
      writeFileSync(squeue, original);
      answer("sbatch", "");
      for (const f of ["started", "out", "err", "rc"]) rmSync(`${mark}.${f}`, { force: true });
    }
  };

  // The resume let the run's lock go before asking squeue whether tasks were still in Slurm and
  // took it again only to submit: a second resume in between passed the same check, and both
  // submitted the pipelines that had not completed (their steps ran twice on the cluster). The
  // lock is still let go for the question, but the run must be as it was when it is taken again.
  it("the second, started while the first asks squeue, submits; the first is refused (run-in-use); one submission", () => {
    const { id, outer, second, jobs } = whileFirstAsksSqueue(
      (id) => `run --resume ${id} --executor slurm --detach`,
    );
    expect(second.rc, second.stderr).toBe(0);
    expect(outer.exitCode, outer.stderr).toBe(2);
    expect(outer.stderr).toContain(
      `run ${id} was changed by another gpuplan while this resume asked Slurm whether its tasks still run (its journal or slurm/jobs.json was written); nothing was submitted  [run-in-use]`,
    );
    expect(calls().filter((c) => c.startsWith("sbatch"))).toHaveLength(1);
    expect(jobs).toEqual(["4242", "4343"]);
  });

  // `gpuplan runs` takes a run's lock for an instant to see whether it is in use: a resume that
  // met that instant as it took the lock back after its squeue check was refused run-in-use.
  it("a look at the run that holds its lock for an instant as the check ends does not refuse the resume", () => {
    const id = detached();
    const squeue = join(fake, "squeue");
    const original = readFileSync(squeue);
    const lock = join(dir, ".gpuplan/runs", id, "run.lock");
    writeFileSync(
      squeue,
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); echo "squeue $*" >> "$d/calls"',
        // Held from before squeue answers until 0.3 s after (its output not squeue's, which would hold
        // the answer back until it ends): the resume takes the lock back meanwhile.
        `flock -x ${shq(lock)} sleep 0.4 </dev/null >/dev/null 2>&1 & sleep 0.1`,
        "printf '4242_0|CANCELLED|None|node3|0|4243|\\n4242_1|CANCELLED|None|(null)|0|4244|\\n'",
        "",
      ].join("\n"),
    );
    answer("sbatch", "4343\n");
    rmSync(join(fake, "calls"), { force: true });
    try {
      const r = run(["run", "--resume", id, "--executor", "slurm", "--detach"]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.stderr).not.toContain("[run-in-use]");
      expect(r.exitCode, r.stderr).toBe(0);
      expect(calls().filter((c) => c.startsWith("sbatch"))).toHaveLength(1);
    } finally {
      writeFileSync(squeue, original);
      answer("sbatch", "");
    }
  });

  // The resume held the run's lock through its squeue check (up to 15 s a call): any other
  // gpuplan on the run meanwhile, a dry run of it included, was refused run-in-use.
  it("a dry run of it while the first asks squeue is not refused (run-in-use), and the first submits", () => {
    const { outer, second, jobs } = whileFirstAsksSqueue(
      (id) => `run --resume ${id} --executor slurm --dry-run`,
    );
    expect(second.stderr).not.toContain("[run-in-use]");
    expect(second.rc, second.stderr).toBe(0);
    expect(second.stdout).toContain("$ sbatch --parsable");
    expect(outer.exitCode, outer.stderr).toBe(0);
    expect(calls().filter((c) => c.startsWith("sbatch"))).toHaveLength(1);
    expect(jobs).toEqual(["4242", "4343"]);
  });
});

// A resume read slurm/jobs.json over and over: for the squeue check (and the tasks' endings it
// weighs), the completed pipelines, the room check, the repeated-id check and the record written
// after sbatch — a 64 MiB record read six times, and each read could differ from the last.
describe("a resume of a Slurm run", () => {
  it("reads slurm/jobs.json once, and records the new array after the old", () => {
    const id = detached();
    const log = join(dir, "opens.log");
    rmSync(log, { force: true });
    answer("squeue", "4242_0|CANCELLED|None|node3|0|4243|\n4242_1|CANCELLED|None|(null)|0|4244|\n");
    answer("sbatch", "4343\n");
    try {
      const r = gpuplan(["run", "--resume", id, "--executor", "slurm", "--detach"], {
        cwd: dir,
        nodeArgs: ["--import", join(ROOT, "test/helpers/record-opens.mjs")],
        env: {
          PATH: `${fake}:${process.env.PATH}`,
          SLURM_CONF: "/nonexistent",
          GPUPLAN_TEST_OPEN_LOG: log,
          GPUPLAN_TEST_OPEN_PATTERN: "slurm/jobs\\.json$",
        },
      });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(0);
      const reads = readFileSync(log, "utf8").trim().split("\n");
      expect(reads).toHaveLength(1);
      expect(reads[0]).toMatch(new RegExp(`(^|/)\\.gpuplan/runs/${id}/slurm/jobs\\.json$`));
      const doc = JSON.parse(readFileSync(join(dir, ".gpuplan/runs", id, "slurm/jobs.json"), "utf8"));
      expect(doc.arrays.map((a: { job: string }) => a.job)).toEqual(["4242", "4343"]);
    } finally {
      answer("squeue", "");
      answer("sbatch", "");
    }
  });
});

describe("a submission that would grow slurm/jobs.json past what gpuplan reads", () => {
  // The record was checked only when read: a resume submitted its arrays and then wrote a record
  // that status, the follower and the next --resume refused as damaged-run, its jobs in Slurm.
  const refused = (id: string, why: string) => {
    const jobs = join(dir, ".gpuplan/runs", id, "slurm/jobs.json");
    const before = readFileSync(jobs);
    answer("sbatch", "4343\n");
    rmSync(join(fake, "calls"), { force: true });
    // The dry run says so too, as the submission would: it printed the scripts and exited 0.
    const dry = run(["run", "--resume", id, "--executor", "slurm", "--dry-run"]);
    expect(hasCrashed(dry), dry.stderr).toBe(false);
    expect(dry.exitCode, dry.stderr).toBe(2);
    expect(dry.stdout).toBe("");
    expect(dry.stderr).toContain(`run ${id} cannot take this submission: slurm/jobs.json would ${why}`);
    expect(dry.stderr).toContain("nothing was submitted  [slurm-run-too-large]");
    const r = run(["run", "--resume", id, "--executor", "slurm", "--detach"]);
    answer("sbatch", "");
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`run ${id} cannot take this submission: slurm/jobs.json would ${why}`);
    expect(r.stderr).toContain("nothing was submitted  [slurm-run-too-large]");
    expect(r.stderr).toContain("--pipeline");
    expect(calls().filter((c) => c.startsWith("sbatch"))).toEqual([]);
    expect(readFileSync(jobs).equals(before)).toBe(true);
    const status = run(["status", id]);
    expect(status.exitCode, status.stderr).toBe(0);
  };
  const record = (arrays: object[]) =>
    `${JSON.stringify({ schema: "gpuplan/slurm-run@1", arrays }, null, 2)}\n`;
  const first = { job: "4242", script: "01-cpu.sbatch", pipelines: ["p0", "p1"] };

  it("past 100,000 arrays: refused before sbatch (slurm-run-too-large), the record as it was", () => {
    const id = detached();
    const arrays = [
      first,
      ...Array.from({ length: 99_999 }, (_, i) => ({
        job: String(5_000_000 + i),
        script: "01-cpu.sbatch",
        pipelines: ["p0"],
      })),
    ];
    writeFileSync(join(dir, ".gpuplan/runs", id, "slurm/jobs.json"), record(arrays));
    refused(id, "name 100001 job arrays, more than the 100000 gpuplan keeps for one run");
  });

  it("past 64 MiB as gpuplan writes it: refused before sbatch, the record as it was", () => {
    const id = detached();
    const filler = { job: "5000000", script: "01-cpu.sbatch", pipelines: [""] };
    const room = 64 * 1024 * 1024 - Buffer.byteLength(record([first, filler]));
    // 40 bytes short of the bound: no array of two pipelines fits.
    filler.pipelines = ["x".repeat(room - 40)];
    writeFileSync(join(dir, ".gpuplan/runs", id, "slurm/jobs.json"), record([first, filler]));
    refused(id, "be more than the 67108864 bytes gpuplan reads");
  });
});

describe("what sbatch prints", () => {
  it("a notice before the job id: the job id is the last line that is one", () => {
    const id = detached("NOTICE: maintenance on Friday 08:00-12:00\n4343;cluster1\n");
    const doc = JSON.parse(readFileSync(join(dir, ".gpuplan/runs", id, "slurm/jobs.json"), "utf8"));
    expect(doc.arrays.map((a: { job: string }) => a.job)).toEqual(["4343"]);
  });

  it("a refusal of the first array: says nothing was submitted and leaves no run folder (not an 'unfinished', resumable run)", () => {
    const runsDir = join(dir, ".gpuplan/runs");
    const before = existsSync(runsDir) ? readdirSync(runsDir).sort() : [];
    answer("sbatch", "", 1, "sbatch: error: Batch job submission failed: Invalid partition name specified\n");
    for (const args of [["--detach"], []]) {
      const r = run(["run", "plan.json", "--executor", "slurm", ...args]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain(
        "sbatch refused 01-cpu.sbatch: nothing was submitted  [slurm-command-failed]",
      );
      expect(r.stderr).toContain("Invalid partition name specified");
      expect(existsSync(runsDir) ? readdirSync(runsDir).sort() : []).toEqual(before);
    }
    answer("sbatch", "");
  });

  it("an sbatch killed by a signal before answering keeps the run folder: slurmctld may have queued the array", () => {
    const runsDir = join(dir, ".gpuplan/runs");
    const before = existsSync(runsDir) ? readdirSync(runsDir) : [];
    answer("sbatch", "", "KILL");
    const r = run(["run", "plan.json", "--executor", "slurm", "--detach"]);
    answer("sbatch", "");
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("sbatch refused 01-cpu.sbatch  [slurm-command-failed]");
    expect(r.stderr).not.toContain("nothing was submitted");
    const added = readdirSync(runsDir).filter((id) => !before.includes(id));
    expect(added).toHaveLength(1);
    expect(existsSync(join(runsDir, added[0]!, "slurm", "01-cpu.sbatch"))).toBe(true);
  });

  it("exit 0 and no job id: says the array may be queued and what sbatch printed, escaped", () => {
    answer("sbatch", "NOTICE: maintenance\x1b[2J on Friday\n");
    const r = run(["run", "plan.json", "--executor", "slurm", "--detach"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("printed no job id gpuplan can read, so the array may be queued");
    expect(r.stderr).toContain("NOTICE: maintenance");
    expect(r.stderr).not.toContain("\x1b[2J");
    expect(r.stderr).toContain("squeue --me -n gpuplan-fake-1");
    expect(r.stderr).not.toContain("(no message)");
  });
});

// sbatch giving an id the run names already (Slurm's ids wrapped, a site's wrapper printing an old
// one): recordArrays wrote it twice, and the record was refused as damaged-run (`names job 4242
// twice`), the jobs in Slurm. Now the submission is cancelled and refused, the record as it was.
describe("an sbatch that gives a job id the run names already", () => {
  it("on --resume, the id in slurm/jobs.json: cancelled, refused, the record as it was and readable", () => {
    const id = detached("4242\n");
    const jobs = join(dir, ".gpuplan/runs", id, "slurm/jobs.json");
    const before = readFileSync(jobs);
    answer("sbatch", "4242\n");
    rmSync(join(fake, "calls"), { force: true });
    const r = run(["run", "--resume", id, "--executor", "slurm", "--detach"]);
    answer("sbatch", "");
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `sbatch gave 01-cpu.sbatch job id 4242, the id of 01-cpu.sbatch in run ${id}'s slurm/jobs.json: gpuplan cannot tell two jobs of one id apart, so nothing of this submission was recorded; job 4242 of this submission cancelled (scancel)  [slurm-command-failed]`,
    );
    expect(r.stderr).toContain("squeue --me -n gpuplan-fake-1");
    expect(calls().filter((c) => c.startsWith("scancel"))).toEqual(["scancel 4242"]);
    expect(readFileSync(jobs).equals(before)).toBe(true);
    const status = run(["status", id]);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toContain("on Slurm (job 4242): 2 pipelines");
  });

  it("twice in one submission: the arrays cancelled, nothing recorded, and the run can be resumed", () => {
    const two = [
      "version: 1",
      "name: two",
      "pipelines:",
      "  - { name: g, steps: [{ id: a, run: [sh, -c, 'true'], memory: torch, vram: 1GiB, timeout: 2m }] }",
      "  - { name: c, steps: [{ id: a, run: [sh, -c, 'true'], memory: numpy, timeout: 2m }] }",
      "",
    ].join("\n");
    writeFileSync(join(dir, "two.yaml"), two);
    const compiled = run(["compile", "two.yaml", "--inventory", "node.json", "-o", "two.json"]);
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    const runsDir = join(dir, ".gpuplan/runs");
    const before = existsSync(runsDir) ? readdirSync(runsDir) : [];
    answer("sbatch", "4242\n");
    rmSync(join(fake, "calls"), { force: true });
    const r = run(["run", "two.json", "--executor", "slurm", "--detach"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(
      /sbatch gave 02-cpu\.sbatch job id 4242, the id sbatch gave 01-gpu-\S+\.sbatch just before: .*job 4242 of this submission cancelled \(scancel\)/,
    );
    expect(calls().filter((c) => c.startsWith("scancel"))).toEqual(["scancel 4242"]);
    const [id] = readdirSync(runsDir).filter((run) => !before.includes(run));
    expect(existsSync(join(runsDir, id!, "slurm/jobs.json"))).toBe(false);
    answer("sbatch", "7171\n");
    // One array (this fake sbatch gives every call one id): recorded, and the run reads.
    const resumed = run(["run", "--resume", id!, "--executor", "slurm", "--detach", "--pipeline", "c"]);
    answer("sbatch", "");
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("submitted as Slurm job 7171 (1 pipeline)");
    const status = run(["status", id!]);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stdout).toContain("on Slurm (job 7171): 2 pipelines — 1 not-submitted, 1 unknown");
  });
});

// `run --executor slurm --dry-run --json` (or --ui json) printed the text dry run on stdout, where
// every other --json path prints one JSON document.
describe("--executor slurm --dry-run --json", () => {
  it("prints the arrays, sbatch command lines and scripts as gpuplan/slurm-dry-run@1; submits nothing", () => {
    const runsDir = join(dir, ".gpuplan/runs");
    const before = existsSync(runsDir) ? readdirSync(runsDir).sort() : [];
    rmSync(join(fake, "calls"), { force: true });
    for (const flags of [["--json"], ["--ui", "json"]]) {
      const r = run(["run", "plan.json", "--executor", "slurm", "--dry-run", ...flags]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(validateSlurmDryRun(doc), JSON.stringify(validateSlurmDryRun.errors)).toBe(true);
      expect(doc).toMatchObject({
        schema: "gpuplan/slurm-dry-run@1",
        plan: "fake",
        pipelines: ["p0", "p1"],
        completed: [],
        arrays: [{ script: "01-cpu.sbatch", pipelines: ["p0", "p1"], gres: null, sharing: "cpu" }],
      });
      expect(doc.runDir).toBe(join(runsDir, doc.run));
      const [script] = doc.scripts;
      expect(script.path).toBe(join(doc.runDir, "slurm", "01-cpu.sbatch"));
      expect(script.command.slice(0, 3)).toEqual(["sbatch", "--parsable", script.path]);
      expect(script.text).toMatch(/^#!/);
      expect(script.text).toContain("#SBATCH --array=0-1");
    }
    expect(calls()).toEqual([]);
    expect(existsSync(runsDir) ? readdirSync(runsDir).sort() : []).toEqual(before);
  });

  it("a submission with errors: a gpuplan/error@1 document on stdout, exit 1", () => {
    const spaced = join(dir, "has space");
    mkdirSync(spaced, { recursive: true });
    writeFileSync(join(spaced, "plan.json"), readFileSync(join(dir, "plan.json")));
    const r = gpuplan(["run", "plan.json", "--executor", "slurm", "--dry-run", "--json"], {
      cwd: spaced,
      env: { PATH: `${fake}:${process.env.PATH}`, SLURM_CONF: "/nonexistent" },
    });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(1);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ schema: "gpuplan/error@1", exitCode: 1 });
    expect(JSON.stringify(doc.problems)).toContain("slurm-unsafe-path");
    expect(r.stderr).toContain("[slurm-unsafe-path]");
  });
});

// A new run whose second array sbatch refused (its first cancelled) kept its folder with slurm/
// and no slurm/jobs.json, and read as a run gpuplan was killed in: `runs` listed it unfinished
// ("it never ended: gpuplan was stopped") with a resume without --executor slurm, which ran the
// plan here; status said it did not run on Slurm; the report said nothing of it.
describe("a new run whose submission failed part way", () => {
  /** two.json (a GPU and a CPU array) run with sbatch giving 5151, then refusing; scancel exiting `scancelRc`. */
  const submitPartly = (scancelRc: number) => {
    const two = [
      "version: 1",
      "name: two",
      "pipelines:",
      "  - { name: g, steps: [{ id: a, run: [sh, -c, 'true'], memory: torch, vram: 1GiB, timeout: 2m }] }",
      "  - { name: c, steps: [{ id: a, run: [sh, -c, 'true'], memory: numpy, timeout: 2m }] }",
      "",
    ].join("\n");
    writeFileSync(join(dir, "two.yaml"), two);
    expect(run(["compile", "two.yaml", "--inventory", "node.json", "-o", "two.json"]).exitCode).toBe(0);
    const sbatch = join(fake, "sbatch");
    const original = readFileSync(sbatch);
    const count = join(dir, "sbatch-count");
    writeFileSync(
      sbatch,
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); echo "sbatch $*" >> "$d/calls"',
        `if [ -e ${shq(count)} ]; then echo 'sbatch: error: Batch job submission failed: Invalid qos specification' >&2; exit 1; fi`,
        `: > ${shq(count)}`,
        "echo 5151",
        "",
      ].join("\n"),
    );
    answer("scancel", "", scancelRc, scancelRc ? "scancel: error: Unable to contact slurm controller\n" : "");
    const runsDir = join(dir, ".gpuplan/runs");
    const before = existsSync(runsDir) ? readdirSync(runsDir) : [];
    rmSync(join(fake, "calls"), { force: true });
    try {
      const r = run(["run", "two.json", "--executor", "slurm", "--detach"]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(calls().filter((c) => c.startsWith("scancel"))).toEqual(["scancel 5151"]);
      const [id] = readdirSync(runsDir).filter((x) => !before.includes(x));
      expect(existsSync(join(runsDir, id!, "slurm"))).toBe(true);
      expect(existsSync(join(runsDir, id!, "slurm/jobs.json"))).toBe(false);
      return { id: id!, stderr: r.stderr };
    } finally {
      writeFileSync(sbatch, original);
      answer("scancel", "");
      rmSync(count, { force: true });
    }
  };
  const listing = (id: string) => {
    const r = run(["runs", "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    return (JSON.parse(r.stdout) as { runs: Record<string, unknown>[] }).runs.find((x) => x.id === id);
  };

  it("runs, status and report say it failed and nothing runs; the resume offered (and --resume alone) goes to Slurm", () => {
    const { id, stderr } = submitPartly(0);
    expect(stderr).toContain(
      "sbatch refused 02-cpu.sbatch (the 1 array(s) submitted before it were cancelled)",
    );
    expect(stderr).toContain(`then gpuplan run --resume ${id} --executor slurm submits the run again`);
    const said =
      "its submission to Slurm failed: sbatch refused 02-cpu.sbatch (the 1 array(s) submitted before it were cancelled); nothing of it is queued or running";
    expect(listing(id)).toMatchObject({
      status: "failed",
      resumable: true,
      resume: `gpuplan run two.json --resume ${id} --executor slurm`,
      problem: said,
    });
    const text = run(["runs"]);
    expect(text.stdout).toContain(`${id}: ${said}`);
    expect(text.stdout).toContain(`resume ${id}: gpuplan run two.json --resume ${id} --executor slurm`);
    const status = run(["status", id]);
    expect(hasCrashed(status), status.stderr).toBe(false);
    expect(status.exitCode, status.stderr).toBe(0);
    expect(status.stderr).toContain(`run ${id}: ${said}`);
    expect(status.stdout).toContain("2 not-submitted");
    const report = run(["report", id]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(report.stderr).toContain(`gpuplan report: run ${id}: 2 steps, 0 attempts, failed; on stdout`);
    expect(report.stderr).toContain(`note: gpuplan runs: ${said}`);
    // Without --executor it resumes where it went: Slurm, not here.
    answer("sbatch", "7171\n");
    rmSync(join(fake, "calls"), { force: true });
    const resumed = run(["run", "--resume", id, "--detach", "--pipeline", "c"]);
    answer("sbatch", "");
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stdout).toContain("submitted as Slurm job 7171 (1 pipeline)");
    expect(calls().filter((c) => c.startsWith("sbatch"))).toHaveLength(1);
    // Once a record names arrays of it, the old failure is not said of them (the resume wrote no
    // journal entry yet: it is detached).
    answer("squeue", "7171_0|RUNNING|None|node3|0|7172|\n");
    const after = run(["status", id]);
    answer("squeue", "");
    expect(after.exitCode, after.stderr).toBe(0);
    expect(after.stdout).toContain("running");
    expect(after.stderr).not.toContain("its submission to Slurm failed");
  });

  it("where scancel failed: runs says arrays of it may still run, and offers no resume", () => {
    const { id, stderr } = submitPartly(1);
    expect(stderr).toContain("cancelling the 1 array(s) submitted before it failed");
    expect(stderr).toContain(
      `once no array of it is in Slurm (squeue --me), gpuplan run --resume ${id} --executor slurm`,
    );
    expect(listing(id)).toMatchObject({
      status: "failed",
      resumable: false,
      resume: null,
      problem: expect.stringContaining(
        "its submission to Slurm failed: sbatch refused 02-cpu.sbatch (cancelling the 1 array(s) submitted before it failed",
      ),
    });
    expect(listing(id)!.problem).toContain("arrays of it may still be queued or running");
    // Nor is its folder pruned: those arrays' tasks would write into it.
    const pruned = run(["runs", "--prune", "--keep", "0", "--json"]);
    expect(hasCrashed(pruned), pruned.stderr).toBe(false);
    expect(existsSync(join(dir, ".gpuplan/runs", id))).toBe(true);
    expect(JSON.stringify(JSON.parse(pruned.stdout).pruned)).toContain(
      "arrays of it may still be queued or running",
    );
  });
});

describe("a followed run's --events /dev/stdout", () => {
  it("reaches stdout when it is a socket (a Node parent's pipes, systemd): every event of events.jsonl", () => {
    // The tasks never report (nothing runs them): Slurm says both completed, and the follower
    // closes the pipelines out from that. Opening /dev/stdout anew says ENXIO for a socket.
    answer("sbatch", "4242\n");
    answer("squeue", "");
    answer("sacct", "4242_0|COMPLETED|0:0|node3\n4242_1|COMPLETED|0:0|node3\n");
    const r = run(["run", "plan.json", "--executor", "slurm", "--events", "/dev/stdout", "--ui", "plain"]);
    answer("sacct", "");
    expect(hasCrashed(r), r.stderr).toBe(false);
    const runDir = /run dir: (\S+)/.exec(r.stderr)?.[1];
    expect(runDir, r.stderr).toBeDefined();
    const recorded = readFileSync(join(dir, runDir!, "events.jsonl"), "utf8");
    expect(recorded.split("\n").length).toBeGreaterThan(2);
    expect(r.stdout).toBe(recorded);
  });

  it("an --events FIFO nobody opens: the follower says the events are lost (records-incomplete, exit 2), the run folder keeps them", () => {
    answer("sbatch", "4243\n");
    answer("squeue", "");
    answer("sacct", "4243_0|COMPLETED|0:0|node3\n4243_1|COMPLETED|0:0|node3\n");
    const fifo = join(dir, "nobody.fifo");
    execFileSync("mkfifo", [fifo]);
    const r = run(["run", "plan.json", "--executor", "slurm", "--events", fifo, "--ui", "plain"]);
    answer("sacct", "");
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("nobody opened it for reading");
    expect(r.stderr).toMatch(
      /error: the run's records are incomplete: .*nobody\.fifo.*\[records-incomplete\]/,
    );
    expect(r.stderr).toContain("keeps its own copy of the events");
    const runDir = /run dir: (\S+)/.exec(r.stderr)?.[1];
    expect(readFileSync(join(dir, runDir!, "events.jsonl"), "utf8")).toContain('"run.end"');
  });
});

describe("--sbatch-arg=--requeue (or an abbreviation, --req) after gpuplan's own --no-requeue", () => {
  it("the follower waits out NODE_FAIL, as with --requeue: the script lets Slurm run the task again", () => {
    // A squeue that says NODE_FAIL twice, then COMPLETED (the requeued tasks' end).
    const squeue = join(fake, "squeue");
    const original = readFileSync(squeue);
    writeFileSync(
      squeue,
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); n=$(cat "$d/squeue.count" 2>/dev/null || echo 0); echo $((n+1)) > "$d/squeue.count"',
        'if [ "$n" -lt 2 ]; then s=NODE_FAIL; else s=COMPLETED; fi',
        "printf '4242_0|%s|None|node3|0|4243|\\n4242_1|%s|None|node3|0|4244|\\n' $s $s",
        "",
      ].join("\n"),
    );
    answer("sbatch", "4242\n");
    try {
      for (const arg of ["--sbatch-arg=--requeue", "--sbatch-arg=--req"]) {
        rmSync(join(fake, "squeue.count"), { force: true });
        const r = run(["run", "plan.json", "--executor", "slurm", "--ui", "plain", arg]);
        expect(hasCrashed(r), r.stderr).toBe(false);
        expect(r.stderr).toContain("Slurm ended task COMPLETED");
        expect(r.stderr).not.toContain("Slurm ended task NODE_FAIL");
      }
    } finally {
      writeFileSync(squeue, original);
    }
  });
});

describe("a Slurm run's folder copied where Slurm is not (a workstation)", () => {
  it("runs offers to resume it here (--executor local), which works, not on Slurm (slurm-not-found)", () => {
    const id = detached();
    answer("squeue", "4242_0|CANCELLED|None|node3|0|4243|\n4242_1|CANCELLED|None|(null)|0|4244|\n");
    const listed = (r: { stdout: string }) =>
      JSON.parse(r.stdout).runs.find((x: { id: string }) => x.id === id) as { resume: string | null };
    expect(listed(run(["runs", "--json"])).resume).toContain("--executor slurm");
    // No Slurm command on PATH; sh for the steps.
    const noSlurm = join(dir, "no-slurm");
    mkdirSync(noSlurm, { recursive: true });
    symlinkSync("/bin/sh", join(noSlurm, "sh"));
    const away = { cwd: dir, env: { PATH: noSlurm, SLURM_CONF: "/nonexistent" } };
    const offered = listed(gpuplan(["runs", "--json"], away)).resume;
    expect(offered).toBe(`gpuplan run plan.json --resume ${id} --executor local`);
    const resumed = gpuplan([...offered!.split(" ").slice(1), "--ui", "plain"], away);
    expect(hasCrashed(resumed), resumed.stderr).toBe(false);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(readFileSync(join(dir, "p0.count"), "utf8")).toBe("run\n");
    rmSync(join(dir, "p0.count"));
    rmSync(join(dir, "p1.count"));
    answer("squeue", "");
  });
});

/** A run on Slurm Ctrl-C'd once the follower is up (SIGINT after 3 s), in `ui`. */
function interruptedRun(ui: "plain" | "json") {
  // timeout(1) sends the SIGINT and reads on (spawnSync's own timeout stops reading).
  return spawnSync(
    "timeout",
    [
      "--preserve-status",
      "-s",
      "INT",
      "3",
      process.execPath,
      join(ROOT, "bin/gpuplan.js"),
      "run",
      "plan.json",
      "--executor",
      "slurm",
      "--ui",
      ui,
    ],
    {
      cwd: dir,
      env: { ...process.env, PATH: `${fake}:${process.env.PATH}`, SLURM_CONF: "/nonexistent", NO_COLOR: "1" },
      encoding: "utf8",
    },
  );
}

const SCANCEL_REFUSES = "scancel: error: Kill job error on job id 4242: Access/permission denied\x1b[2J\n";

describe("an interrupt while scancel fails", () => {
  it("says the jobs could not be cancelled, with scancel's words escaped, never that they were", () => {
    answer("sbatch", "4242\n");
    answer("squeue", "4242_0|PENDING|Priority|(null)|0|4243|\n4242_1|PENDING|Priority|(null)|0|4244|\n");
    answer("scancel", "", 1, SCANCEL_REFUSES);
    try {
      const r = interruptedRun("plain");
      expect(r.status, r.stderr).toBe(130);
      expect(r.stderr).not.toContain("cancelled Slurm job");
      expect(r.stderr).toContain("could not cancel Slurm job 4242: scancel failed (exit 1:");
      expect(r.stderr).toContain("Access/permission denied");
      expect(r.stderr).not.toContain("\x1b[2J");
      expect(r.stderr).toContain("hint: scancel 4242");
      // The resume a bare 'Resume with:' offered is refused while the jobs are in Slurm: the
      // summary says what comes first, and the resume says the same.
      const id = /^run (\S+) interrupted/m.exec(r.stderr)?.[1];
      expect(id, r.stderr).toBeDefined();
      expect(r.stderr).not.toContain("Resume with:");
      expect(r.stderr).toContain(
        `Slurm job 4242 may still be queued or running, and --resume is refused until it has left Slurm: scancel 4242 (or wait for it: gpuplan status ${id}), then resume with: gpuplan run --resume ${id}`,
      );
      const resumed = run(["run", "--resume", id!, "--ui", "plain"]);
      expect(resumed.exitCode, resumed.stderr).toBe(2);
      expect(resumed.stderr).toContain("[slurm-run-active]");
      expect(resumed.stderr).toContain("scancel 4242, then resume");
    } finally {
      answer("scancel", "");
      answer("squeue", "");
    }
  });

  it("--ui json: run.summary lists the jobs that may still run (uncancelledJobs), by the schema", () => {
    answer("sbatch", "4242\n");
    answer("squeue", "4242_0|PENDING|Priority|(null)|0|4243|\n4242_1|PENDING|Priority|(null)|0|4244|\n");
    answer("scancel", "", 1, SCANCEL_REFUSES);
    try {
      const r = interruptedRun("json");
      expect(r.status, r.stderr).toBe(130);
      const last = JSON.parse(r.stdout.trim().split("\n").at(-1)!);
      expect(validateRunEvent(last), JSON.stringify(validateRunEvent.errors)).toBe(true);
      expect(last).toMatchObject({ event: "run.summary", interrupted: true, uncancelledJobs: ["4242"] });
    } finally {
      answer("scancel", "");
      answer("squeue", "");
    }
  });
});

describe("a regular file where a detached run's slurm/ folder belongs", () => {
  // It read as no Slurm records at all: status said the run did not run on Slurm
  // (not-a-slurm-run), and --resume took it for a local run and ran its pipelines here, beside
  // tasks that may still be in Slurm.
  it("status and --resume (any executor) say slurm/ is damaged, naming it (exit 2); nothing runs", () => {
    const id = detached();
    const slurm = join(dir, ".gpuplan/runs", id, "slurm");
    rmSync(slurm, { recursive: true });
    writeFileSync(slurm, "not a folder\n");
    const said = `${join(".gpuplan/runs", id, "slurm")} is damaged: a regular file stands where the run's Slurm records folder belongs`;
    for (const args of [
      ["status", id],
      ["status", id, "--json"],
      ["run", "--resume", id, "--ui", "plain"],
      ["run", "--resume", id, "--executor", "slurm", "--ui", "plain"],
      ["run", "--resume", id, "--executor", "local", "--ui", "plain"],
    ]) {
      const r = run(args);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, `${args.join(" ")}: ${r.stderr}`).toBe(2);
      expect(`${r.stdout}${r.stderr}`, args.join(" ")).toContain(said);
      expect(`${r.stdout}${r.stderr}`, args.join(" ")).toContain("damaged-run");
    }
    expect(existsSync(join(dir, "p0.count"))).toBe(false);
  });
});

describe("a Slurm run whose folder is removed while it runs, then interrupted", () => {
  // The summary offered 'Resume with: gpuplan run --resume …' for a run whose journal was gone
  // (the resume fails with unknown-run), and the end then stopped on sorting the deleted
  // events.jsonl (ENOENT, an internal error).
  it("offers no resume: the records-incomplete error says the journal was deleted (exit 130)", () => {
    const squeue = join(fake, "squeue");
    const original = readFileSync(squeue);
    // The follower's first squeue removes the run's folder (the one whose jobs.json names job
    // 5151), then interrupts gpuplan, its parent: no clock decides when.
    writeFileSync(
      squeue,
      [
        "#!/bin/sh",
        `f=$(grep -l '"5151"' .gpuplan/runs/*/slurm/jobs.json 2>/dev/null | head -1)`,
        'if [ -n "$f" ]; then rm -rf "$(dirname "$(dirname "$f")")"; kill -INT $PPID; fi',
        "printf '5151_0|PENDING|Priority|(null)|0|5152|\\n5151_1|PENDING|Priority|(null)|0|5153|\\n'",
        "",
      ].join("\n"),
    );
    answer("sbatch", "5151\n");
    try {
      const r = run(["run", "plan.json", "--executor", "slurm", "--ui", "plain"]);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(130);
      expect(r.stderr).toMatch(/run \S+ interrupted: 0 ok/);
      expect(r.stderr).toMatch(/journal\.jsonl \(deleted while the run ran\).*\[records-incomplete\]/);
      expect(r.stderr).toContain("hint: the run's journal was deleted, so --resume cannot continue it");
      expect(r.stderr).not.toContain("Resume with:");
      expect(r.stderr).toContain("cancelled Slurm job 5151 (scancel)");
    } finally {
      writeFileSync(squeue, original);
      answer("sbatch", "");
    }
  });
});
