// A run folder is run by one gpuplan at a time, resumed from its own plan, and read with
// suspicion: `--resume` without a plan argument (the line printed after Ctrl-C, pasted), a second
// resume while one runs (exit 2 naming the holder), and damaged folders (a clear error naming the
// file, or a resume around a torn last journal line — never a crash, never a hang).
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  copyFileSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readBootId } from "../../src/run/step/boot-id.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";
import { otherBootId } from "./helpers/boot-ids.js";
import { FIXTURES } from "./helpers/harness.js";

const EXAMPLE = join(ROOT, "examples/hello-cpu.yaml");
const MISSING = "/nonexistent/gpuplan-test-library.so";
const NO_GPU = {
  GPUPLAN_NVML_LIBRARY: MISSING,
  GPUPLAN_CUDA_LIBRARY: MISSING,
  GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
  GPUPLAN_AMD_SMI_LIBRARY: MISSING,
  GPUPLAN_HIP_LIBRARY: MISSING,
  GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
  CI: "1",
};

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});
const temp = () => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};
const runIds = (cwd: string) => readdirSync(join(cwd, ".gpuplan/runs")).sort();

/** `gpuplan run ARGS` in the background; ended (SIGKILL) after the test if still running. */
function startRun(cwd: string, args: string[], env: Record<string, string>) {
  const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "run", ...args], {
    cwd,
    env: { ...process.env, ...NO_GPU, NO_COLOR: "1", ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let stderr = "";
  child.stderr?.on("data", (d) => {
    stderr += String(d);
  });
  const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
  cleanups.push(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });
  return { child, exited, stderr: () => stderr };
}

async function until(what: () => boolean, ms = 20_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 50));
  }
}

function slowRunFolder(): { cwd: string; record: string; entered: () => string[] } {
  const cwd = temp();
  for (const f of ["slow-steps.yaml", "record.mjs"]) copyFileSync(join(FIXTURES, f), join(cwd, f));
  const record = join(cwd, "record.jsonl");
  // Steps append to the record as it is read: a line being written is left for the next look.
  const entered = () =>
    existsSync(record)
      ? readFileSync(record, "utf8")
          .split("\n")
          .flatMap((l) => {
            try {
              return [JSON.parse(l) as { what: string; name: string }];
            } catch {
              return [];
            }
          })
          .filter((e) => e.what === "enter")
          .map((e) => e.name)
      : [];
  return { cwd, record, entered };
}

function stop(child: ChildProcess, signal: NodeJS.Signals = "SIGINT") {
  child.kill(signal);
}

describe("gpuplan run --resume", () => {
  it("the 'Resume with' line printed after Ctrl-C works pasted: no plan argument, the run folder's plan", async () => {
    const { cwd, record, entered } = slowRunFolder();
    const first = startRun(cwd, ["slow-steps.yaml", "--ui", "plain"], { RECORD_FILE: record });
    await until(() => entered().includes("a-two"));
    stop(first.child);
    expect(await first.exited, first.stderr()).toBe(130);
    const line = /Resume with: (gpuplan run .*)$/m.exec(first.stderr())?.[1];
    expect(line, first.stderr()).toBeDefined();
    // Remove the pipeline file: the resume must need nothing but the run folder.
    rmSync(join(cwd, "slow-steps.yaml"));
    const args = line!.split(" ").slice(1);
    const r = gpuplan([...args, "--ui", "plain"], { cwd, env: { ...NO_GPU, RECORD_FILE: record } });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(entered().filter((n) => n === "a-three")).toHaveLength(1);
    expect(entered().filter((n) => n === "a-one")).toHaveLength(1);
    // Without --resume the plan is still needed.
    const none = gpuplan(["run"], { cwd, env: NO_GPU });
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain(
      "gpuplan run needs a plan or pipeline file, or --resume RUN  [missing-argument]",
    );
  }, 60_000);

  it("a second gpuplan on the same run folder exits 2 naming the holder's pid, a new run's and a resume's", async () => {
    // Steps that run for a minute: the checks below happen while a gpuplan holds the run, however
    // slowly a loaded machine starts the second one.
    const { cwd, record, entered } = slowRunFolder();
    writeFileSync(
      join(cwd, "long.yaml"),
      `version: 1
name: long
registry: { platform_priority: [cpu], max_parallel_pipelines: 2 }
pipelines:
  - name: chain-{n}
    matrix: { n: [a, b] }
    steps:
      - { id: one, run: [node, record.mjs, "{n}-one", "50"], memory: numpy }
      - { id: two, run: [node, record.mjs, "{n}-two", "60000"], memory: numpy, needs: [one] }
`,
    );
    const first = startRun(cwd, ["long.yaml", "--ui", "plain"], { RECORD_FILE: record });
    await until(() => entered().includes("a-two"));
    const [id] = runIds(cwd);
    const refused = gpuplan(["run", "--resume", id!], { cwd, env: { ...NO_GPU, RECORD_FILE: record } });
    expect(refused.exitCode, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`run ${id} is being run by another gpuplan (pid ${first.child.pid})`);
    expect(refused.stderr).toContain("[run-in-use]");
    expect(hasCrashed(refused)).toBe(false);
    // `gpuplan runs` sees it running (and would not prune it).
    const listed = gpuplan(["runs", "--json"], { cwd, env: NO_GPU });
    expect(JSON.parse(listed.stdout).runs[0]).toMatchObject({ id, status: "running", resumable: false });
    stop(first.child);
    expect(await first.exited).toBe(130);

    // Two resumes: the first runs what is left, the second is refused while it does.
    const resumed = startRun(cwd, ["--resume", id!, "--ui", "plain"], { RECORD_FILE: record });
    await until(() => entered().filter((n) => n === "a-two").length === 2);
    const second = gpuplan(["run", "--resume", id!], { cwd, env: { ...NO_GPU, RECORD_FILE: record } });
    expect(second.exitCode, second.stderr).toBe(2);
    expect(second.stderr).toContain(`(pid ${resumed.child.pid})`);
    expect(hasCrashed(second)).toBe(false);
    stop(resumed.child);
    expect(await resumed.exited, resumed.stderr()).toBe(130);
    expect(entered().filter((n) => n === "a-one")).toHaveLength(1);
    // Free again once it has ended.
    const after = gpuplan(["run", "--resume", id!, "--dry-run"], { cwd, env: NO_GPU });
    expect(after.exitCode, after.stderr).toBe(0);
    const again = gpuplan(["runs", "--json"], { cwd, env: NO_GPU });
    expect(JSON.parse(again.stdout).runs[0]).toMatchObject({ id, status: "interrupted", resumable: true });
  }, 60_000);
});

describe("gpuplan killed or terminated", () => {
  it.each([
    ["SIGTERM", 143],
    ["SIGHUP", 129],
    ["SIGQUIT", 131],
  ] as const)(
    "%s ends a run with exit %i (SIGINT: 130), its steps' ends recorded, resumable",
    async (signal, code) => {
      const { cwd, record, entered } = slowRunFolder();
      const first = startRun(cwd, ["slow-steps.yaml", "--ui", "plain"], { RECORD_FILE: record });
      await until(() => entered().includes("a-two"));
      stop(first.child, signal);
      expect(await first.exited, first.stderr()).toBe(code);
      expect(first.stderr()).toMatch(/Resume with: gpuplan run --resume /);
      const [id] = runIds(cwd);
      const journal = readFileSync(join(cwd, ".gpuplan/runs", id!, "journal.jsonl"), "utf8");
      expect(journal).toMatch(/"type":"step"[^\n]*"status":"interrupted"/);
    },
    60_000,
  );

  it("after kill -9, --resume waits for a step still running (saying so), then runs it again as a new attempt", async () => {
    const { cwd, record, entered } = slowRunFolder();
    const first = startRun(cwd, ["slow-steps.yaml", "--ui", "plain"], { RECORD_FILE: record });
    await until(() => entered().includes("a-two"));
    const [id] = runIds(cwd);
    const journal = join(cwd, ".gpuplan/runs", id!, "journal.jsonl");
    await until(() =>
      /"type":"start","ts":"[^"]*","pipeline":"chain-a","step":"two"/.test(readFileSync(journal, "utf8")),
    );
    first.child.kill("SIGKILL");
    await first.exited;
    const r = gpuplan(["run", "--resume", id!, "--ui", "json"], {
      cwd,
      env: { ...NO_GPU, RECORD_FILE: record },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    // Said for the first step still running, with the pid the journal has for it.
    const waiting = /gpuplan: waiting for (chain-[ab])\/two \(attempt 1, pid (\d+)\)/.exec(r.stderr);
    expect(waiting, r.stderr).not.toBeNull();
    const started = readFileSync(journal, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .find((e) => e.type === "start" && e.pipeline === waiting![1] && e.step === "two" && e.attempt === 1);
    expect(started.pid).toBe(Number(waiting![2]));
    // Never two at once: each second run entered after the first one's exit.
    for (const name of ["a-two", "b-two"]) {
      const lines = readFileSync(record, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((e) => e.name === name);
      expect(lines.map((e) => e.what)).toEqual(["enter", "exit", "enter", "exit"]);
      expect(lines[2].t).toBeGreaterThan(lines[1].t);
    }
    // A new attempt: its own number in the events and the journal, its own log files.
    const events = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const start = events.find(
      (e) => e.event === "gpu.step.start" && e.pipeline === "chain-a" && e.step === "two",
    );
    expect(start).toMatchObject({ attempt: 2 });
    expect(start.logPath).toMatch(/chain-a@two@2\.out\.log$/);
    const end = events.find(
      (e) => e.event === "gpu.step.end" && e.pipeline === "chain-a" && e.step === "two",
    );
    expect(end).toMatchObject({ attempt: 2, status: "ok" });
    const entries = readFileSync(journal, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.pipeline === "chain-a" && e.step === "two");
    expect(entries.map((e) => `${e.type}:${e.attempt}`)).toEqual(["start:1", "start:2", "step:2"]);
  }, 60_000);

  it.skipIf(process.platform !== "linux")(
    "after kill -9, --resume does not wait for an attempt the journal recorded in another boot",
    async () => {
      // After a reboot the kernel gives pids and start ticks out again from the start: a process
      // now holding a recorded pid is not the attempt, however alike. The attempts here still run
      // (the same boot in truth); the journal is made to say they started in another.
      const { cwd, record, entered } = slowRunFolder();
      const first = startRun(cwd, ["slow-steps.yaml", "--ui", "plain"], { RECORD_FILE: record });
      await until(() => entered().includes("a-two") && entered().includes("b-two"));
      const [id] = runIds(cwd);
      const journal = join(cwd, ".gpuplan/runs", id!, "journal.jsonl");
      const twoStarted = () =>
        readFileSync(journal, "utf8").match(
          /"type":"start","ts":"[^"]*","pipeline":"chain-[ab]","step":"two"/g,
        )?.length === 2;
      await until(twoStarted);
      first.child.kill("SIGKILL");
      await first.exited;
      const now = readBootId();
      expect(now, "this test needs /proc/sys/kernel/random/boot_id").not.toBeNull();
      const entries = readFileSync(journal, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      // The header and every start record this boot.
      expect(entries[0]).toMatchObject({ type: "run", bootId: now });
      const starts = entries.filter((e) => e.type === "start");
      expect(starts.map((e) => e.bootId)).toEqual(starts.map(() => now));
      const another = otherBootId(now!);
      writeFileSync(
        journal,
        entries
          .map((e) => `${JSON.stringify(e.type === "start" ? { ...e, bootId: another } : e)}\n`)
          .join(""),
      );
      const r = gpuplan(["run", "--resume", id!, "--ui", "plain"], {
        cwd,
        env: { ...NO_GPU, RECORD_FILE: record },
      });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).not.toContain("waiting for");
      expect(r.stderr).toContain("[chain-a/two cpu] started (attempt 2)");
    },
    60_000,
  );
});

describe("a step's session outlives its group", () => {
  // GNU `timeout` moves what it runs to a group of its own (setpgid): once the step's own group is
  // gone (its shell killed), that child still runs the step's work in the step's session.
  // `env -i` in front of it clears the environment that names the step: only the log files it
  // still writes to say whose it is.
  const escaping = (clear: boolean) => `version: 1
pipelines:
  - name: p
    steps:
      - id: a
        run: [sh, -c, 'echo "start $GPUPLAN_OOM_ATTEMPT" >> side.log; ${clear ? "env -i " : ""}timeout 600 sh -c "echo inner >> side.log; sleep 3; echo end >> side.log"']
        memory: numpy
`;
  const sideLog = (cwd: string) =>
    existsSync(join(cwd, "side.log")) ? readFileSync(join(cwd, "side.log"), "utf8").trim().split("\n") : [];

  it.each([
    ["its end never recorded (gpuplan killed)", false, false],
    ["its end recorded (interrupted), though it outlived the kill", true, false],
    ["its environment cleared by env -i", false, true],
  ])(
    "--resume waits for it, %s, saying so — never running the step beside it",
    async (_, recorded, clear) => {
      const cwd = temp();
      writeFileSync(join(cwd, "t.yaml"), escaping(clear));
      const first = startRun(cwd, ["t.yaml", "--ui", "plain"], {});
      // `timeout` has moved its child to a group of its own once that child writes.
      await until(() => sideLog(cwd).includes("inner"));
      const [id] = runIds(cwd);
      const journal = join(cwd, ".gpuplan/runs", id!, "journal.jsonl");
      await until(() => /"type":"start"/.test(readFileSync(journal, "utf8")));
      first.child.kill("SIGKILL");
      await first.exited;
      const start = readFileSync(journal, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .find((e) => e.type === "start");
      // The step's shell and its group go; `timeout` and its sleep live on in the step's session.
      process.kill(-start.pid, "SIGKILL");
      if (recorded) {
        const end = { ...start, type: "step", status: "interrupted", exitCode: null, durationMs: 1 };
        writeFileSync(journal, `${readFileSync(journal, "utf8")}${JSON.stringify(end)}\n`);
      }
      const r = gpuplan(["run", "--resume", id!, "--ui", "plain"], { cwd, env: NO_GPU });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toMatch(new RegExp(`waiting for p/a \\(attempt 1, pid ${start.pid}\\)`));
      expect(sideLog(cwd)).toEqual(["start 1", "inner", "end", "start 2", "inner", "end"]);
    },
    60_000,
  );
});

/** A finished run of one quick CPU pipeline; each variant damages a copy of its folder. */
function finishedRun(): { cwd: string; dir: string } {
  const cwd = temp();
  const r = gpuplan(["run", EXAMPLE, "--ui", "plain", "--pipeline", "plate-P1"], {
    cwd,
    env: NO_GPU,
  });
  expect(r.exitCode, r.stderr).toBe(0);
  const [id] = runIds(cwd);
  return { cwd, dir: join(".gpuplan/runs", id!) };
}

const VARIANTS: [string, (dir: string) => void, RegExp][] = [
  ["a null journal line", (d) => insertLine(d, "null"), /journal\.jsonl line 2 is null, not a journal entry/],
  ["a line that is not JSON", (d) => insertLine(d, '{"type":"step",'), /journal\.jsonl line 2 is not JSON/],
  [
    "an entry without its fields",
    (d) => insertLine(d, '{"type":"step","pipeline":"plate-P1"}'),
    /journal\.jsonl line 2 is a step entry without step, status, attempt/,
  ],
  ...(
    [
      ["1e300", "1e\\+300"],
      ["-1", "-1"],
      ["1.5", "1.5"],
      ['"2"', "\\(a string\\)"],
    ] as const
  ).map(([attempt, shown]): [string, (dir: string) => void, RegExp] => [
    `a step entry whose attempt is ${attempt}`,
    (d) =>
      insertLine(
        d,
        `{"type":"step","pipeline":"plate-P1","step":"generate","status":"ok","attempt":${attempt}}`,
      ),
    new RegExp(
      `journal\\.jsonl line 2 is a step entry whose attempt ${shown} is not a whole number from 0 to 1000000`,
    ),
  ]),
  [
    "a start entry whose attempt is out of range (it was said to be without one)",
    (d) =>
      insertLine(
        d,
        '{"type":"start","pipeline":"plate-P1","step":"generate","attempt":1e300,"device":"cpu","pid":5,"startTicks":null}',
      ),
    /journal\.jsonl line 2 is a start entry whose attempt 1e\+300 is not a whole number from 1 to 1000000/,
  ],
  [
    "an empty journal",
    (d) => writeFileSync(join(d, "journal.jsonl"), ""),
    /journal\.jsonl has no run header/,
  ],
  [
    "a journal without its header",
    (d) => writeFileSync(join(d, "journal.jsonl"), readJournalLines(d).slice(1).join("\n")),
    /journal\.jsonl does not start with a run header/,
  ],
  ["a missing plan.json", (d) => rmSync(join(d, "plan.json")), /plan\.json is missing/],
  [
    "a header whose plan digest is not one",
    (d) => {
      const [header, ...rest] = readJournalLines(d);
      const changed = { ...JSON.parse(header!), planSha256: "not-a-digest" };
      writeFileSync(join(d, "journal.jsonl"), [JSON.stringify(changed), ...rest].join("\n"));
    },
    /journal\.jsonl line 1 is a run entry whose planSha256 is not a SHA-256 digest/,
  ],
  [
    "a header whose boot id is not one",
    (d) => {
      const [header, ...rest] = readJournalLines(d);
      const changed = { ...JSON.parse(header!), bootId: "\u001b[2J not a boot id" };
      writeFileSync(join(d, "journal.jsonl"), [JSON.stringify(changed), ...rest].join("\n"));
    },
    /journal\.jsonl line 1 is a run entry whose bootId is not a boot id \(a UUID\)/,
  ],
  [
    "an attempt's start whose boot id is not one",
    (d) => {
      const lines = readJournalLines(d);
      const i = lines.findIndex((l) => l.includes('"type":"start"'));
      lines[i] = JSON.stringify({ ...JSON.parse(lines[i]!), bootId: 42 });
      writeFileSync(join(d, "journal.jsonl"), lines.join("\n"));
    },
    /journal\.jsonl line \d+ is a start entry whose bootId is not a boot id \(a UUID\)/,
  ],
  [
    "plan.json a directory",
    (d) => replaceByDir(d, "plan.json"),
    /plan\.json is a directory, not a regular file/,
  ],
  ["the journal a directory", (d) => replaceByDir(d, "journal.jsonl"), /journal\.jsonl is a directory/],
  [
    "events.jsonl a symbolic link (the resume would append its events to the target)",
    (d) => {
      rmSync(join(d, "events.jsonl"));
      symlinkSync(join(d, "..", "elsewhere.jsonl"), join(d, "events.jsonl"));
    },
    /events\.jsonl is a symbolic link/,
  ],
  [
    "logs/ a symbolic link (the resume would write its logs into the target)",
    (d) => {
      renameSync(join(d, "logs"), join(d, "..", "elsewhere"));
      symlinkSync(join(d, "..", "elsewhere"), join(d, "logs"));
    },
    /logs is a symbolic link/,
  ],
  [
    "the journal a FIFO",
    (d) => {
      rmSync(join(d, "journal.jsonl"));
      execFileSync("mkfifo", [join(d, "journal.jsonl")]);
    },
    /journal\.jsonl is a FIFO, not a regular file/,
  ],
  [
    "run.lock a FIFO (it opened, then truncating it crashed)",
    (d) => {
      rmSync(join(d, "run.lock"), { force: true });
      execFileSync("mkfifo", [join(d, "run.lock")]);
    },
    /run\.lock is a FIFO, not a regular file/,
  ],
  [
    "run.lock a symbolic link",
    (d) => {
      rmSync(join(d, "run.lock"), { force: true });
      symlinkSync(join(d, "..", "elsewhere.lock"), join(d, "run.lock"));
    },
    /run\.lock is a symbolic link/,
  ],
];

/** The journal's header as an older gpuplan wrote it: no planSha256. */
function forgetPlanDigest(dir: string) {
  const [header, ...rest] = readJournalLines(dir);
  const { planSha256, ...older } = JSON.parse(header!);
  expect(planSha256).toMatch(/^[0-9a-f]{64}$/);
  writeFileSync(join(dir, "journal.jsonl"), [JSON.stringify(older), ...rest].join("\n"));
}

function readJournalLines(dir: string): string[] {
  return readFileSync(join(dir, "journal.jsonl"), "utf8").split("\n");
}
function insertLine(dir: string, line: string) {
  const lines = readJournalLines(dir);
  lines.splice(1, 0, line);
  writeFileSync(join(dir, "journal.jsonl"), lines.join("\n"));
}
function replaceByDir(dir: string, name: string) {
  rmSync(join(dir, name));
  mkdirSync(join(dir, name));
}

describe("--resume of something that is not a run folder", () => {
  // A device or a file was read on as a folder: 'cannot stat /dev/zero/slurm/jobs.json: ENOTDIR'.
  it.each([
    ["/dev/zero", "/dev/zero is a device, not a run folder"],
    ["./plain.txt", "./plain.txt is a regular file, not a run folder"],
    ["./plain.txt/run", "no run ./plain.txt/run"],
  ])("--resume %s says so (exit 2)", (resume, message) => {
    const cwd = temp();
    writeFileSync(join(cwd, "plain.txt"), "not a run\n");
    const r = gpuplan(["run", "--resume", resume], { cwd, env: NO_GPU });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain(`gpuplan: error: --resume: ${message}`);
    expect(r.stderr).toContain("[unknown-run]");
    expect(r.stderr).not.toContain("ENOTDIR");
  });

  // `--resume examples` took a run.lock in the folder, then said `examples/journal.jsonl is
  // missing [damaged-run]` ("the run folder was changed after gpuplan wrote it") of a folder no
  // gpuplan ever ran, and left run.lock there.
  it.each([["./examples"], ["."]])(
    "--resume %s, a folder with none of a run's files, is no run (exit 2) and leaves nothing there",
    (resume) => {
      const cwd = temp();
      mkdirSync(join(cwd, "examples"));
      writeFileSync(join(cwd, "examples", "p.yaml"), "version: 1\n");
      const before = readdirSync(join(cwd, resume)).sort();
      const r = gpuplan(["run", "--resume", resume], { cwd, env: NO_GPU });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        `gpuplan: error: --resume: ${resume} is not a run folder: it has none of journal.jsonl, plan.json, events.jsonl  [unknown-run]`,
      );
      expect(r.stderr).not.toContain("damaged-run");
      expect(readdirSync(join(cwd, resume)).sort()).toEqual(before);
    },
  );
});

describe("a damaged run folder", () => {
  it.each(VARIANTS)(
    "%s: exit 2 naming the file and what is wrong, no crash, no hang",
    (_name, damage, message) => {
      const { cwd, dir } = finishedRun();
      damage(join(cwd, dir));
      const started = Date.now();
      const r = gpuplan(["run", EXAMPLE, "--resume", `./${dir}`], { cwd, env: NO_GPU });
      expect(Date.now() - started).toBeLessThan(15_000);
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(message);
      expect(r.stderr).toContain("[damaged-run]");
    },
  );

  it("plan.json that is not JSON, in a folder without a plan digest (an older gpuplan's), is a located plan problem (exit 1)", () => {
    const { cwd, dir } = finishedRun();
    forgetPlanDigest(join(cwd, dir));
    writeFileSync(join(cwd, dir, "plan.json"), "{ not json");
    const r = gpuplan(["run", EXAMPLE, "--resume", `./${dir}`], { cwd, env: NO_GPU });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("plan.json");
  });

  it("a torn last journal line (killed mid-write) is resumed around and cut off, so the next entries are whole lines", () => {
    const { cwd, dir } = finishedRun();
    const journal = join(cwd, dir, "journal.jsonl");
    // Forget the last step's entry, then tear a new one: that step runs again.
    const lines = readJournalLines(join(cwd, dir)).filter(Boolean);
    const last = lines.findLastIndex((l) => l.includes('"type":"step"'));
    const kept = lines.filter((_, i) => i !== last && !lines[i]!.includes('"type":"end"'));
    writeFileSync(journal, `${kept.join("\n")}\n{"type":"step","pipeline":"plate-P1","st`);
    const r = gpuplan(["run", EXAMPLE, "--resume", `./${dir}`, "--ui", "json"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    const starts = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.event === "gpu.step.start");
    expect(starts).toHaveLength(1);
    // The torn text is cut off; what followed is whole and the run resumes again cleanly.
    const after = readFileSync(journal, "utf8").trim().split("\n");
    for (const l of after) expect(() => JSON.parse(l), l).not.toThrow();
    const again = gpuplan(["run", EXAMPLE, "--resume", `./${dir}`, "--ui", "json"], { cwd, env: NO_GPU });
    expect(again.exitCode, again.stderr).toBe(0);
    expect(again.stdout).not.toContain('"gpu.step.start"');
  });
});

// The journal says which steps of the plan finished; plan.json says what the rest run. A plan.json
// changed in between ran its own commands as if the old plan's steps had finished ok. The run's
// header keeps plan.json's SHA-256, and --resume refuses a file that no longer matches it.
describe("--resume of a run whose plan.json changed since it started", () => {
  /** A run whose second step failed: a resume runs it again, from plan.json. */
  function failedRun(): { cwd: string; dir: string; plan: string; marker: string } {
    const cwd = temp();
    const marker = join(cwd, "edited-command-ran");
    writeFileSync(
      join(cwd, "p.yaml"),
      [
        "version: 1",
        "name: t",
        "registry: { platform_priority: [cpu] }",
        "pipelines:",
        "  - name: a",
        "    steps:",
        "      - { id: one, run: [node, -e, '0'], memory: numpy }",
        "      - { id: two, run: [node, -e, 'process.exit(3)'], memory: numpy, needs: [one] }",
        "",
      ].join("\n"),
    );
    const r = gpuplan(["run", "p.yaml", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(1);
    const [id] = runIds(cwd);
    const dir = join(".gpuplan/runs", id!);
    return { cwd, dir, plan: join(cwd, dir, "plan.json"), marker };
  }
  /** The failing step's command, made to leave the marker file instead. */
  const edited = (text: string, marker: string) => {
    const changed = text.replace(
      '"process.exit(3)"',
      JSON.stringify(`require("fs").writeFileSync(${JSON.stringify(marker)}, "")`),
    );
    expect(changed).not.toBe(text);
    return changed;
  };

  const CHANGES: [string, (plan: string, marker: string) => void][] = [
    [
      "a step's command edited",
      (plan, marker) => writeFileSync(plan, edited(readFileSync(plan, "utf8"), marker)),
    ],
    [
      "replaced by another file (renamed over it)",
      (plan, marker) => {
        writeFileSync(`${plan}.new`, edited(readFileSync(plan, "utf8"), marker));
        renameSync(`${plan}.new`, plan);
      },
    ],
    [
      "compacted (the same plan, other bytes)",
      (plan) => writeFileSync(plan, JSON.stringify(JSON.parse(readFileSync(plan, "utf8")))),
    ],
    ["truncated", (plan) => writeFileSync(plan, readFileSync(plan, "utf8").slice(0, 100))],
  ];

  it.each(CHANGES)("%s: exit 2 naming plan.json [resume-plan-changed], and nothing runs", (_name, change) => {
    const { cwd, dir, plan, marker } = failedRun();
    const journal = readFileSync(join(cwd, dir, "journal.jsonl"), "utf8");
    change(plan, marker);
    for (const args of [
      ["run", "--resume", `./${dir}`],
      ["run", "p.yaml", "--resume", `./${dir}`],
    ]) {
      const r = gpuplan([...args, "--ui", "plain"], { cwd, env: NO_GPU });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain("[resume-plan-changed]");
      expect(r.stderr).toContain(`--resume: ${dir}/plan.json is not the plan run`);
      expect(r.stderr).toMatch(/hint: restore the plan the run started with/);
    }
    expect(existsSync(marker)).toBe(false);
    expect(readFileSync(join(cwd, dir, "journal.jsonl"), "utf8")).toBe(journal);
  });

  it("a Slurm array task handed the run's plan.json refuses it changed (--slurm-task), and runs it unchanged", () => {
    const { cwd, dir, plan, marker } = failedRun();
    const task = ["run", `${dir}/plan.json`, "--pipeline", "a", "--ui", "plain", "--slurm-task", "5_0"];
    const original = readFileSync(plan, "utf8");
    // What the submitting gpuplan makes for its tasks (slurm-session.ts).
    mkdirSync(join(cwd, dir, "slurm/events"), { recursive: true });
    writeFileSync(plan, edited(original, marker));
    const refused = gpuplan(task, { cwd, env: NO_GPU });
    expect(hasCrashed(refused), refused.stderr).toBe(false);
    expect(refused.exitCode, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`--slurm-task: ${dir}/plan.json is not the plan run`);
    expect(refused.stderr).toContain("[resume-plan-changed]");
    expect(existsSync(marker)).toBe(false);
    writeFileSync(plan, original);
    const ran = gpuplan(task, { cwd, env: NO_GPU });
    expect(ran.stderr).toContain("[a/two cpu] started (attempt 2)");
  });

  it("--slurm-task on a local run's folder (no slurm/) is refused and writes nothing there", () => {
    const { cwd, dir } = failedRun();
    const before = readdirSync(join(cwd, dir)).sort();
    const r = gpuplan(["run", `${dir}/plan.json`, "--ui", "plain", "--slurm-task", "5_0"], {
      cwd,
      env: NO_GPU,
    });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("was not submitted to Slurm");
    expect(r.stderr).toContain("[invalid-option-value]");
    expect(readdirSync(join(cwd, dir)).sort()).toEqual(before);
  });

  it("a Slurm task whose run folder lacks slurm/events/ (an exported script's, a tidied one) makes it", () => {
    const { cwd, dir } = failedRun();
    mkdirSync(join(cwd, dir, "slurm"));
    const r = gpuplan(
      ["run", `${dir}/plan.json`, "--pipeline", "a", "--ui", "plain", "--slurm-task", "5_0"],
      {
        cwd,
        env: NO_GPU,
      },
    );
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.stderr).toContain("[a/two cpu] started (attempt 2)");
    expect(existsSync(join(cwd, dir, "slurm/events/5_0.jsonl"))).toBe(true);
  });

  it("a link planted in its place, even to the same bytes, is refused as damaged", () => {
    const { cwd, dir, plan } = failedRun();
    renameSync(plan, join(cwd, "elsewhere.json"));
    symlinkSync(join(cwd, "elsewhere.json"), plan);
    const r = gpuplan(["run", "--resume", `./${dir}`, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toMatch(/plan\.json is a symbolic link.*\[damaged-run\]/);
  });

  it("an unchanged plan.json resumes", () => {
    const { cwd, dir } = failedRun();
    const r = gpuplan(["run", "--resume", `./${dir}`, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(r.stderr).not.toContain("resume-plan");
    // The failing step ran again (attempt 2), the finished one did not.
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toContain("[a/one cpu] skipped: completed in an earlier run");
    expect(r.stderr).toContain("[a/two cpu] started (attempt 2)");
  });

  it("a folder from before the digest (an older gpuplan) still resumes, saying its plan.json is unchecked", () => {
    const { cwd, dir, plan, marker } = failedRun();
    forgetPlanDigest(join(cwd, dir));
    writeFileSync(plan, edited(readFileSync(plan, "utf8"), marker));
    const r = gpuplan(["run", "--resume", `./${dir}`, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/plan\.json +warning +run \S+: its journal keeps no digest of its plan/);
    expect(r.stderr).toContain("[resume-plan-unverified]");
    expect(existsSync(marker)).toBe(true);
  });
});

// A resume waits for an earlier attempt's session while any process of it lives, its leader gone
// or not. Once that session is gone its id (the step's pid) may be given to a later session
// leader — a login shell, another run's step — whose own leader may exit while what it started
// lives on: that session is not the step's, and a resume (or a prune) must not wait for it.
describe.skipIf(process.platform !== "linux")(
  "an earlier attempt's pid given to an unrelated session",
  () => {
    it("--resume does not wait for the unrelated session's processes", async () => {
      const { cwd, dir } = finishedRun();
      // An unrelated session whose leader exits at once, leaving a sleep in it (no job control: in
      // the leader's group too), as a logged-out shell leaves a nohup job.
      const leader = spawn("sh", ["-c", "sleep 30 >/dev/null 2>&1 & echo $$ $!"], {
        detached: true,
        stdio: ["ignore", "pipe", "ignore"],
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
      });
      let out = "";
      leader.stdout.on("data", (d) => {
        out += String(d);
      });
      await new Promise((resolve) => leader.on("close", resolve));
      const [sid, sleeper] = out.trim().split(" ").map(Number);
      cleanups.push(() => {
        try {
          process.kill(sleeper!, "SIGKILL");
        } catch {
          // Gone.
        }
      });
      const stat = readFileSync(`/proc/${sleeper}/stat`, "latin1");
      const ticks = Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19]);
      // The journal: the last step's attempt started as that pid (its leader no later than the
      // sleep), and gpuplan killed before its end was recorded.
      const lines = readJournalLines(join(cwd, dir)).filter(Boolean);
      const start = JSON.parse(lines.findLast((l) => l.includes('"type":"start"'))!);
      const kept = lines.filter((l) => !l.includes('"type":"end"'));
      const last = kept.findLastIndex((l) => l.includes('"type":"step"'));
      kept.splice(last, 1, JSON.stringify({ ...start, pid: sid, startTicks: ticks }));
      writeFileSync(join(cwd, dir, "journal.jsonl"), `${kept.join("\n")}\n`);
      const started = Date.now();
      const r = gpuplan(["run", "--resume", `./${dir}`, "--ui", "plain"], { cwd, env: NO_GPU });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).not.toContain("waiting for");
      expect(Date.now() - started).toBeLessThan(20_000);
      expect(procAlive(sleeper!)).toBe(true);
    }, 40_000);
  },
);

const procAlive = (pid: number) => existsSync(`/proc/${pid}`);

describe("a link planted under the name of a log the resume writes", () => {
  // The next attempt's log name is known in advance (logs/<pipeline>@<step>@<attempt>.out.log);
  // a link there must not have the step's output appended to what it points at.
  it("a plain step's: the attempt fails saying so, the target is untouched", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "t.yaml"),
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - id: a\n        run: [sh, -c, 'echo out; test -f ok']\n        memory: numpy\n",
    );
    const first = gpuplan(["run", "t.yaml", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(1);
    const [id] = runIds(cwd);
    writeFileSync(join(cwd, "victim"), "precious\n");
    symlinkSync(join(cwd, "victim"), join(cwd, ".gpuplan/runs", id!, "logs/p@a@2.out.log"));
    writeFileSync(join(cwd, "ok"), "");
    const r = gpuplan(["run", "--resume", id!, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/cannot open its log file \S+p@a@2\.out\.log: it is a symbolic link/);
    expect(readFileSync(join(cwd, "victim"), "utf8")).toBe("precious\n");
  });

  it("a worker task's and its worker's: the task runs, the run ends records-incomplete (exit 2), no crash", () => {
    const cwd = temp();
    mkdirSync(join(cwd, "workers"));
    copyFileSync(join(ROOT, "examples/workers/segment-worker.mjs"), join(cwd, "workers/segment-worker.mjs"));
    writeFileSync(
      join(cwd, "w.yaml"),
      `version: 1
pipelines:
  - name: p
    steps:
      - id: gate
        run: [test, -f, ok]
        memory: numpy
      - id: seg
        needs: [gate]
        memory: numpy
        worker:
          run: [node, workers/segment-worker.mjs, --load-ms, "10"]
          key: toy
        run: [--diameter, "30"]
`,
    );
    const first = gpuplan(["run", "w.yaml", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(1);
    const [id] = runIds(cwd);
    const logs = join(cwd, ".gpuplan/runs", id!, "logs");
    writeFileSync(join(cwd, "victim"), "precious\n");
    symlinkSync(join(cwd, "victim"), join(logs, "p@seg.log"));
    mkdirSync(join(logs, "workers/toy@cpu.log"), { recursive: true });
    writeFileSync(join(cwd, "ok"), "");
    const r = gpuplan(["run", "--resume", id!, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("[p/seg cpu] finished ok");
    const incomplete = r.stderr.split("\n").find((l) => l.includes("records are incomplete"));
    expect(incomplete).toMatch(/p@seg\.log \(ELOOP\)/);
    expect(incomplete).toMatch(/toy@cpu\.log \(EISDIR\)/);
    // Neither is for want of room.
    expect(r.stderr).toContain("hint: check those files and their folder (ls -l);");
    expect(r.stderr).not.toContain("free some space");
    expect(readFileSync(join(cwd, "victim"), "utf8")).toBe("precious\n");
  });
});

describe("a run folder removed while the run runs", () => {
  it("is said (records-incomplete, exit 2), not ended as if its records were kept", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "p.yaml"),
      `version: 1
pipelines:
  - name: p
    steps:
      - id: a
        shell: true
        run: rm -rf ".gpuplan/runs/$GPUPLAN_RUN"
        memory: numpy
      - id: b
        needs: [a]
        run: ["true"]
        memory: numpy
`,
    );
    const r = gpuplan(["run", "p.yaml", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(hasCrashed(r), r.stderr).toBe(false);
    // Every write still succeeded, into files no name leads to: the run said nothing of it and exited 1.
    expect(r.exitCode, r.stderr).toBe(2);
    const incomplete = r.stderr.split("\n").find((l) => l.includes("records are incomplete"));
    expect(incomplete).toMatch(/journal\.jsonl \(deleted while the run ran\)/);
    expect(incomplete).toMatch(/events\.jsonl \(deleted while the run ran\)/);
    expect(r.stderr).toContain("hint: the run's journal was deleted, so --resume cannot continue it");
    // The step after it could not open its log, and said why; no run folder was made again for it.
    expect(r.stderr).toMatch(
      /cannot open its log file \S+p@b\.out\.log: its run folder was removed \(ENOENT\)/,
    );
    expect(readdirSync(join(cwd, ".gpuplan/runs"))).toEqual([]);
  });
});

describe("a run folder removed, then the run interrupted", () => {
  // The summary offered 'Resume with: gpuplan run --resume …' right above the error saying its
  // journal was deleted, so --resume could not continue it.
  it("offers no resume: the records-incomplete error says it cannot be (exit 130)", async () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "p.yaml"),
      `version: 1
pipelines:
  - name: p
    steps:
      - id: a
        shell: true
        run: rm -rf ".gpuplan/runs/$GPUPLAN_RUN" && touch removed && sleep 60
        memory: numpy
`,
    );
    const run = startRun(cwd, ["p.yaml", "--ui", "plain"], {});
    // The journal's deletion is found at its next write: the step's start was written before it.
    await until(() => existsSync(join(cwd, "removed")));
    stop(run.child);
    expect(await run.exited, run.stderr()).toBe(130);
    expect(run.stderr()).toMatch(/run \S+ interrupted: 0 ok/);
    expect(run.stderr()).toContain("hint: the run's journal was deleted, so --resume cannot continue it");
    expect(run.stderr()).not.toContain("Resume with:");
    expect(run.stderr()).not.toContain("--resume 2");
  }, 60_000);
});

describe("a worker task outlives a kill -9 of its gpuplan", () => {
  // The worker keeps running the task it was given (it only sees gpuplan gone at its next read of
  // stdin), so a resume must not give the task to a new worker beside it.
  const WORKER = `import { appendFileSync } from "node:fs";
import { createInterface } from "node:readline";
process.stdout.write(JSON.stringify({ ready: true }) + "\\n");
for await (const line of createInterface({ input: process.stdin })) {
  const task = JSON.parse(line);
  appendFileSync("side.log", "enter " + task.id + "\\n");
  await new Promise((r) => setTimeout(r, 3000));
  appendFileSync("side.log", "leave " + task.id + "\\n");
  process.stdout.write(JSON.stringify({ id: task.id, ok: true }) + "\\n");
}
`;
  it("--resume waits for the worker still running attempt 1, saying so, then runs attempt 2", async () => {
    const cwd = temp();
    writeFileSync(join(cwd, "worker.mjs"), WORKER);
    writeFileSync(
      join(cwd, "w.yaml"),
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - id: seg\n        memory: numpy\n        worker:\n          run: [node, worker.mjs]\n          key: toy\n        run: [go]\n",
    );
    const side = () =>
      existsSync(join(cwd, "side.log")) ? readFileSync(join(cwd, "side.log"), "utf8").trim().split("\n") : [];
    const first = startRun(cwd, ["w.yaml", "--ui", "plain"], {});
    await until(() => side().length > 0);
    first.child.kill("SIGKILL");
    await first.exited;
    const [id] = runIds(cwd);
    const r = gpuplan(["run", "--resume", id!, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/waiting for p\/seg \(attempt 1, pid \d+\)/);
    expect(side()).toEqual(["enter p/seg#1", "leave p/seg#1", "enter p/seg#2", "leave p/seg#2"]);
  }, 60_000);
});
