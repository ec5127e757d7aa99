// Every path gpuplan writes for the user (-o, --save, --events): the folders it needs are made, as
// mkdir -p would; path mistakes are located usage errors with a hint and exit 2, never "internal
// error"; what already sits at the path and is not a regular file is never replaced; `-o -` and
// `-o /dev/stdout` are stdout.
import { spawnSync } from "node:child_process";
import {
  chmodSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

const EXAMPLE = join(ROOT, "examples/cell-painting.yaml");
const CPU_EXAMPLE = join(ROOT, "examples/hello-cpu.yaml");
const TARGET = ["--target", "dgx-h100"];
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
const isRoot = process.getuid?.() === 0;
const canSwitchUser =
  isRoot &&
  spawnSync("runuser", ["-u", "nobody", "--", "test", "-r", join(ROOT, "bin/gpuplan.js")]).status === 0;

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

/** A usage error: exit 2, the message and code on stderr, a hint, no crash, nothing on stdout. */
function expectUsageError(r: ReturnType<typeof gpuplan>, message: string, code = "unwritable-file"): void {
  expect(r.exitCode, r.stderr).toBe(2);
  expect(r.stderr).toContain(`gpuplan: error: ${message}  [${code}]`);
  expect(r.stderr).toMatch(/\n {2}hint: \S/);
  expect(hasCrashed(r)).toBe(false);
  expect(r.stdout).toBe("");
}

describe("compile -o: path mistakes (exit 2, with a hint)", () => {
  it("a directory", () => {
    expectUsageError(
      gpuplan(["compile", EXAMPLE, ...TARGET, "-o", t.dir]),
      `cannot write plan ${t.dir}: it is a directory`,
    );
  });

  it("a path that ends in / is a folder: never a file of that name, never the file before the / (it wrote both)", () => {
    writeFileSync(join(t.dir, "plan.json"), "the plan from before\n");
    for (const out of ["plans/", "plan.json/"]) {
      expectUsageError(
        gpuplan(["compile", CPU_EXAMPLE, "-o", out], { cwd: t.dir, env: NO_GPU }),
        `cannot write plan ${out}: a path that ends in / names a folder, not a file`,
      );
    }
    expect(existsSync(join(t.dir, "plans"))).toBe(false);
    expect(readFileSync(join(t.dir, "plan.json"), "utf8")).toBe("the plan from before\n");
    const detect = gpuplan(["detect", "--save", "inv/"], { cwd: t.dir, env: NO_GPU });
    expect(detect.exitCode).toBe(2);
    expect(detect.stderr).toContain("cannot write inventory inv/: a path that ends in / names a folder");
    expect(existsSync(join(t.dir, "inv"))).toBe(false);
  });

  it("a name as long as a folder holds is written (its temporary file's longer name was refused)", () => {
    for (const name of [`${"a".repeat(250)}.json`, `${"é".repeat(125)}.json`]) {
      const r = gpuplan(["compile", CPU_EXAMPLE, "-o", name], { cwd: t.dir, env: NO_GPU });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(JSON.parse(readFileSync(join(t.dir, name), "utf8")).schema).toMatch(/^gpuplan\/plan@/);
    }
    expect(readdirSync(t.dir).filter((n) => n.endsWith(".tmp"))).toEqual([]);
    // One byte more than a folder holds is the file system's refusal, said as such.
    expectUsageError(
      gpuplan(["compile", CPU_EXAMPLE, "-o", `${"b".repeat(256)}`], { cwd: t.dir, env: NO_GPU }),
      `cannot write plan ${"b".repeat(256)}: the name is too long`,
    );
  });

  it("a file where a folder is needed", () => {
    writeFileSync(join(t.dir, "notes.txt"), "keep\n");
    const out = join(t.dir, "notes.txt", "plan.json");
    expectUsageError(
      gpuplan(["compile", EXAMPLE, ...TARGET, "-o", out]),
      `cannot write plan ${out}: a file stands where a folder is needed`,
    );
    expect(readFileSync(join(t.dir, "notes.txt"), "utf8")).toBe("keep\n");
  });

  it("a link on the way that leads nowhere is named, not taken for a missing folder (it said 'mkdir -p dl')", () => {
    symlinkSync("gone", join(t.dir, "dl"));
    const r = gpuplan(["compile", CPU_EXAMPLE, "-o", "dl/plan.json"], { cwd: t.dir, env: NO_GPU });
    expectUsageError(r, "cannot write plan dl/plan.json: dl is a link to gone, which does not exist");
    expect(r.stderr).toContain(`hint: create ${join(t.dir, "gone")}, or point the link elsewhere`);
    const detect = gpuplan(["detect", "--save", "dl/inv.json"], { cwd: t.dir, env: NO_GPU });
    expect(detect.exitCode).toBe(2);
    expect(detect.stderr).toContain(
      "cannot write inventory dl/inv.json: dl is a link to gone, which does not exist  [unwritable-file]",
    );
    expect(existsSync(join(t.dir, "gone"))).toBe(false);
  });

  it.skipIf(process.platform !== "linux")(
    "under /proc: no mkdir hint, the folder takes no new files or folders",
    () => {
      const r = gpuplan(["compile", CPU_EXAMPLE, "-o", "/proc/self/x/plan.json"], {
        cwd: t.dir,
        env: NO_GPU,
      });
      expectUsageError(
        r,
        "cannot write plan /proc/self/x/plan.json: the folder /proc/self/x does not exist, and /proc/self takes no new folders (a virtual file system such as /proc or /sys)",
      );
      expect(r.stderr).not.toContain("mkdir");
      expectUsageError(
        gpuplan(["compile", CPU_EXAMPLE, "-o", "/proc/self/plan.json"], { cwd: t.dir, env: NO_GPU }),
        "cannot write plan /proc/self/plan.json: the folder /proc/self takes no new files (a virtual file system such as /proc or /sys?)",
      );
    },
  );

  it.skipIf(!canSwitchUser)(
    "a file the user may not write is left as it is, though its folder would let a rename replace it",
    () => {
      chmodSync(t.dir, 0o777);
      const frozen = join(t.dir, "plan.json");
      writeFileSync(frozen, "the reviewed plan\n");
      chmodSync(frozen, 0o444);
      const r = spawnSync(
        "runuser",
        [
          "-u",
          "nobody",
          "--",
          process.execPath,
          join(ROOT, "bin/gpuplan.js"),
          "compile",
          CPU_EXAMPLE,
          "-o",
          frozen,
        ],
        { cwd: t.dir, encoding: "utf8", env: { ...process.env, ...NO_GPU, NO_COLOR: "1" } },
      );
      expectUsageError(
        { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr },
        `cannot write plan ${frozen}: it is read-only for you (mode 444), so gpuplan does not replace it`,
      );
      expect(readFileSync(frozen, "utf8")).toBe("the reviewed plan\n");
      // Root may write it, as with > or tee: replaced, its mode kept.
      const root = gpuplan(["compile", CPU_EXAMPLE, "-o", frozen], { cwd: t.dir, env: NO_GPU });
      expect(root.exitCode, root.stderr).toBe(0);
      expect(statSync(frozen).mode & 0o777).toBe(0o444);
    },
  );

  it.skipIf(!canSwitchUser)("a folder the user may not write", () => {
    const locked = join(t.dir, "locked");
    mkdirSync(locked);
    chmodSync(t.dir, 0o755);
    chmodSync(locked, 0o555);
    const r = spawnSync(
      "runuser",
      [
        "-u",
        "nobody",
        "--",
        process.execPath,
        join(ROOT, "bin/gpuplan.js"),
        "compile",
        EXAMPLE,
        ...TARGET,
        "-o",
        join(locked, "plan.json"),
      ],
      { encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
    );
    expectUsageError(
      { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr },
      `cannot write plan ${join(locked, "plan.json")}: permission denied`,
    );
    expect(r.stderr).toContain(`hint: check that you may write in ${locked}`);
  });

  it("/dev/fd/N that gpuplan was not started with: Node's own pipes and eventfds (writing there crashed it, SIGSEGV), or not open", () => {
    for (const fd of [3, 5, 7, 9, 12, 50]) {
      const r = gpuplan(["compile", CPU_EXAMPLE, "-o", `/dev/fd/${fd}`], { env: NO_GPU, cwd: t.dir });
      expectUsageError(
        r,
        `cannot write plan /dev/fd/${fd}: gpuplan was started without descriptor ${fd} open`,
      );
    }
  });

  it("the pipeline file itself is refused, and left as it was", () => {
    const pipeline = join(t.dir, "p.yaml");
    writeFileSync(pipeline, readFileSync(EXAMPLE));
    const r = gpuplan(["compile", pipeline, ...TARGET, "-o", pipeline]);
    expectUsageError(
      r,
      `-o ${pipeline} is ${pipeline}, an input of this compile: writing the plan there would destroy it`,
      "conflicting-options",
    );
    expect(readFileSync(pipeline, "utf8")).toBe(readFileSync(EXAMPLE, "utf8"));
  });
});

describe("-o, --save: a FIFO nobody reads", () => {
  it("compile -o, detect --save and report -o give up after the wait, located (they hung for good)", () => {
    const fifo = join(t.dir, "plan.fifo");
    expect(spawnSync("mkfifo", [fifo]).status).toBe(0);
    const run = (args: string[]) => {
      const r = spawnSync(process.execPath, [join(ROOT, "bin/gpuplan.js"), ...args], {
        cwd: t.dir,
        env: { ...process.env, ...NO_GPU, NO_COLOR: "1" },
        encoding: "utf8",
        timeout: 15_000,
      });
      expect(r.error, `${args[0]} still waiting after 15 s`).toBeUndefined();
      return { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
    };
    const gaveUp = (what: string) =>
      `cannot write ${what} ${fifo}: it is a FIFO and nothing opened it for reading within 2 s`;
    expectUsageError(run(["compile", CPU_EXAMPLE, "-o", fifo]), gaveUp("plan"));
    const detect = run(["detect", "--save", fifo]);
    expect(detect.exitCode, detect.stderr).toBe(2);
    expect(detect.stderr).toContain(`${gaveUp("inventory")}  [unwritable-file]`);
    expect(run(["run", CPU_EXAMPLE, "--ui", "plain"]).exitCode).toBe(0);
    expectUsageError(run(["report", "-o", fifo]), gaveUp("report"));
    expect(lstatSync(fifo).isFIFO()).toBe(true);
  }, 60_000);
});

describe("compile -o: what is there already", () => {
  it.skipIf(!isRoot)("a character device node is written to, never replaced by a plain file", () => {
    // The real /dev/null must not be put at risk by a test: a node of the same device in a temp dir.
    const devNull = join(t.dir, "null");
    expect(spawnSync("mknod", ["-m", "666", devNull, "c", "1", "3"]).status).toBe(0);
    const r = gpuplan(["compile", EXAMPLE, ...TARGET, "-o", devNull]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(lstatSync(devNull).isCharacterDevice()).toBe(true);
    expect(lstatSync(devNull).rdev).toBe(lstatSync("/dev/null").rdev);
  });

  it("-o /dev/tty without a controlling terminal says so (it said 'no process reads it (a socket or a FIFO…)')", () => {
    // setsid: a new session, which has no controlling terminal (cron, CI).
    const r = spawnSync(
      "setsid",
      ["--wait", process.execPath, join(ROOT, "bin/gpuplan.js"), "compile", CPU_EXAMPLE, "-o", "/dev/tty"],
      { cwd: t.dir, env: { ...process.env, ...NO_GPU, NO_COLOR: "1" }, encoding: "utf8", timeout: 15_000 },
    );
    expectUsageError(
      { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr },
      "cannot write plan /dev/tty: gpuplan has no controlling terminal",
    );
  });

  it("-o - and -o /dev/stdout print the plan on stdout", () => {
    const plain = gpuplan(["compile", EXAMPLE, ...TARGET]);
    for (const out of ["-", "/dev/stdout"]) {
      const r = gpuplan(["compile", EXAMPLE, ...TARGET, "-o", out]);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toBe(plain.stdout);
      expect(JSON.parse(r.stdout).schema).toBe("gpuplan/plan@2");
    }
  });

  it("detect --save - and --save /dev/stdout: the inventory is stdout's one document (a file named - was written; /dev/stdout got it beside the table)", () => {
    for (const save of ["-", "/dev/stdout", "/dev/fd/1"]) {
      for (const json of [[], ["--json"]]) {
        const r = gpuplan(["detect", "--save", save, ...json], { cwd: t.dir, env: NO_GPU });
        expect(r.exitCode, r.stderr).toBe(0);
        expect(hasCrashed(r)).toBe(false);
        expect(JSON.parse(r.stdout).schema).toBe("gpuplan/inventory@1");
      }
    }
    expect(readdirSync(t.dir)).toEqual([]);
  });

  it("an existing plan keeps its mode; a symlink to it stays a symlink", () => {
    const plan = join(t.dir, "plan.json");
    writeFileSync(plan, "{}\n");
    chmodSync(plan, 0o640);
    const link = join(t.dir, "current.json");
    spawnSync("ln", ["-s", "plan.json", link]);
    expect(gpuplan(["compile", EXAMPLE, ...TARGET, "-o", link]).exitCode).toBe(0);
    expect(lstatSync(link).isSymbolicLink()).toBe(true);
    expect(JSON.parse(readFileSync(plan, "utf8")).schema).toBe("gpuplan/plan@2");
    expect(lstatSync(plan).mode & 0o777).toBe(0o640);
  });
});

describe("a file path whose folders do not exist: they are made, as export -o and run --events make theirs", () => {
  it("compile -o, report -o (HTML and trace), detect --save, relative and absolute", () => {
    const compile = gpuplan(["compile", CPU_EXAMPLE, "-o", "plans/ci/plan.json"], {
      cwd: t.dir,
      env: NO_GPU,
    });
    expect(compile.exitCode, compile.stderr).toBe(0);
    expect(compile.stderr).toContain("wrote plans/ci/plan.json");
    expect(JSON.parse(readFileSync(join(t.dir, "plans/ci/plan.json"), "utf8")).schema).toBe("gpuplan/plan@2");
    for (const [args, out] of [
      [["report", "plans/ci/plan.json", "-o", "out/html/plan.html"], "out/html/plan.html"],
      [
        ["report", "plans/ci/plan.json", "--format", "trace", "-o", join(t.dir, "out/trace/t.json")],
        "out/trace/t.json",
      ],
      [["detect", "--save", "inv/here/inventory.json"], "inv/here/inventory.json"],
    ] as const) {
      const r = gpuplan([...args], { cwd: t.dir, env: NO_GPU });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(hasCrashed(r)).toBe(false);
      expect(lstatSync(join(t.dir, out)).isFile()).toBe(true);
    }
  });

  it("nothing is made when compile finds errors, nor where a link points", () => {
    writeFileSync(join(t.dir, "bad.yaml"), "version: 1\nname: x\npipelines: []\nbogus: 1\n");
    const bad = gpuplan(["compile", "bad.yaml", "-o", "never/plan.json"], { cwd: t.dir, env: NO_GPU });
    expect(bad.exitCode, bad.stderr).toBe(1);
    expect(existsSync(join(t.dir, "never"))).toBe(false);
    spawnSync("ln", ["-s", join(t.dir, "elsewhere/plan.json"), join(t.dir, "link.json")]);
    const link = gpuplan(["compile", CPU_EXAMPLE, "-o", "link.json"], { cwd: t.dir, env: NO_GPU });
    expect(link.exitCode).toBe(2);
    // The folder missing is the link target's ("the folder . does not exist", it said).
    expect(link.stderr).toContain(
      `cannot write plan link.json: it is a link to ${join(t.dir, "elsewhere/plan.json")}, whose folder does not exist  [unwritable-file]`,
    );
    expect(link.stderr).toContain(
      `hint: create ${join(t.dir, "elsewhere")} first, or point the link elsewhere`,
    );
    expect(existsSync(join(t.dir, "elsewhere"))).toBe(false);
  });
});

describe("detect --save and run --events", () => {
  it("detect --save to a directory is a usage error", () => {
    expectUsageError(
      gpuplan(["detect", "--save", t.dir], { env: NO_GPU }),
      `cannot write inventory ${t.dir}: it is a directory`,
    );
  });

  it("run --events to a directory fails before the run starts", () => {
    const r = gpuplan(["run", CPU_EXAMPLE, "--ui", "plain", "--events", t.dir], { cwd: t.dir, env: NO_GPU });
    expectUsageError(r, `cannot write events file ${t.dir}: it is a directory`);
    expect(existsSync(join(t.dir, ".gpuplan"))).toBe(false);
  });

  it("run --resume RUN --events into RUN's own folder is refused before anything is opened (it doubled events.jsonl, broke journal.jsonl)", () => {
    const first = gpuplan(["run", CPU_EXAMPLE, "--ui", "plain"], { cwd: t.dir, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = readdirSync(join(t.dir, ".gpuplan/runs"));
    const run = join(".gpuplan/runs", id!);
    const read = (name: string) => readFileSync(join(t.dir, run, name), "utf8");
    const before = { events: read("events.jsonl"), journal: read("journal.jsonl") };
    symlinkSync(join(t.dir, run, "journal.jsonl"), join(t.dir, "journal-link"));
    for (const events of [
      join(run, "events.jsonl"),
      join(run, "journal.jsonl"),
      join(run, "new.jsonl"),
      "journal-link",
    ]) {
      const r = gpuplan(["run", "--resume", id!, "--events", events, "--ui", "plain"], {
        cwd: t.dir,
        env: NO_GPU,
      });
      expectUsageError(
        r,
        `--events ${events} is in the folder of run ${id}, which the resumed run writes itself (its events go to its own events.jsonl already)`,
        "conflicting-options",
      );
    }
    expect(read("events.jsonl")).toBe(before.events);
    expect(read("journal.jsonl")).toBe(before.journal);
    expect(existsSync(join(t.dir, run, "new.jsonl"))).toBe(false);
    const elsewhere = gpuplan(["run", "--resume", id!, "--events", "events.jsonl", "--ui", "plain"], {
      cwd: t.dir,
      env: NO_GPU,
    });
    expect(elsewhere.exitCode, elsewhere.stderr).toBe(0);
    expect(readFileSync(join(t.dir, "events.jsonl"), "utf8")).toContain('"event":"run.end"');
  }, 60_000);

  it("no output lands on another run's records: -o and --events into a run folder's journal, events, plan or logs are refused", () => {
    // report RUN1 -o RUN2/events.jsonl replaced RUN2's events with a page; a new run's --events
    // RUN2/journal.jsonl put event lines in RUN2's journal, which its --resume then refused.
    const first = gpuplan(["run", CPU_EXAMPLE, "--ui", "plain"], { cwd: t.dir, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = readdirSync(join(t.dir, ".gpuplan/runs"));
    const run = join(".gpuplan/runs", id!);
    const before = ["events.jsonl", "journal.jsonl", "plan.json"].map((n) =>
      readFileSync(join(t.dir, run, n), "utf8"),
    );
    const [log] = readdirSync(join(t.dir, run, "logs"));
    const says = (flag: string, path: string) =>
      `${flag} ${path} is one of the records of run ${id} (${realpathSync(join(t.dir, run))}): writing there would destroy them`;
    for (const path of [
      join(run, "events.jsonl"),
      join(run, "plan.json"),
      join(run, "logs", log!),
      join(run, "logs", "new.log"),
    ]) {
      expectUsageError(
        gpuplan(["compile", CPU_EXAMPLE, "-o", path], { cwd: t.dir, env: NO_GPU }),
        says("-o", path),
        "conflicting-options",
      );
      expectUsageError(
        gpuplan(["run", CPU_EXAMPLE, "--events", path, "--ui", "plain"], { cwd: t.dir, env: NO_GPU }),
        says("--events", path),
        "conflicting-options",
      );
    }
    expect(
      ["events.jsonl", "journal.jsonl", "plan.json"].map((n) => readFileSync(join(t.dir, run, n), "utf8")),
    ).toEqual(before);
    expect(existsSync(join(t.dir, run, "logs", "new.log"))).toBe(false);
    // The run's report beside them is an output like any other.
    const report = gpuplan(["report", id!, "-o", join(run, "report.html")], { cwd: t.dir, env: NO_GPU });
    expect(report.exitCode, report.stderr).toBe(0);
  }, 60_000);

  it("run --events under a file is a usage error; a missing folder is made, as before", () => {
    writeFileSync(join(t.dir, "log"), "");
    const bad = gpuplan(["run", CPU_EXAMPLE, "--ui", "plain", "--events", join(t.dir, "log", "e.jsonl")], {
      cwd: t.dir,
      env: NO_GPU,
    });
    expect(bad.exitCode).toBe(2);
    expect(bad.stderr).toContain("[unwritable-file]");
    expect(hasCrashed(bad)).toBe(false);
    const ok = gpuplan(["run", CPU_EXAMPLE, "--ui", "plain", "--events", join(t.dir, "new", "e.jsonl")], {
      cwd: t.dir,
      env: NO_GPU,
    });
    expect(ok.exitCode, ok.stderr).toBe(0);
    expect(readFileSync(join(t.dir, "new", "e.jsonl"), "utf8")).toContain('"event":"run.end"');
  });

  it.skipIf(process.platform !== "linux")(
    "run --events where no folder can be made (under /proc) is a usage error, not a hang",
    () => {
      // Node's recursive mkdir spun there at full CPU for good: run never started nor ended.
      const r = spawnSync(
        process.execPath,
        [
          join(ROOT, "bin/gpuplan.js"),
          "run",
          CPU_EXAMPLE,
          "--ui",
          "plain",
          "--events",
          "/proc/self/x/e.jsonl",
        ],
        { cwd: t.dir, env: { ...process.env, ...NO_GPU }, encoding: "utf8", timeout: 15_000 },
      );
      expect(r.error, "still running after 15 s").toBeUndefined();
      expectUsageError(
        { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr },
        "cannot write events file /proc/self/x/e.jsonl: the folder /proc/self/x does not exist, and /proc/self takes no new folders (a virtual file system such as /proc or /sys)",
      );
      expect(existsSync(join(t.dir, ".gpuplan"))).toBe(false);
    },
    30_000,
  );
});
