// #11.4: text from outside gpuplan never reaches the terminal raw. Each path a hostile or broken
// string can take — a vendor library's strings in `detect`, labels in the shared lock directory
// in `locks`, pipeline and step names and commands in `run` and `--dry-run`, a step's own output,
// and a pipeline file's contents in compile's code frames — is fed ESC, CR, BEL (and bidi
// overrides) through the built CLI, and what comes out holds no control character but newlines.
import { closeSync, mkdirSync, openSync, readdirSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { RECORD_SIZE, recordOffset } from "../../src/run/lock/gpu-file-layout.js";
import { createSlotLock } from "../../src/run/lock/index.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

/** Control characters a terminal acts on, newline excepted. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const CONTROL = /[\u0000-\u0009\u000b-\u001f\u007f-\u009f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]/;
const HOSTILE = "\u001b]0;pwned\u0007\u001b[2J\rX\u202e";
const SHOWN = "\\x1b]0;pwned\\x07\\x1b[2J\\rX\\u202e";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
const temp = (): string => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};

function expectClean(text: string): void {
  const hit = CONTROL.exec(text);
  expect(hit, hit ? JSON.stringify(text.slice(Math.max(0, hit.index - 40), hit.index + 40)) : "").toBeNull();
}

describe.skipIf(!fakeLibsBuilt)("detect: strings from the vendor library", () => {
  it("a GPU name and driver version with escapes are shown escaped, and --json keeps them as they are", () => {
    const dir = temp();
    const scenario = join(dir, "hostile.scenario");
    const original = readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8");
    writeFileSync(
      scenario,
      original
        .replace("nvml.0.name = NVIDIA H100 80GB HBM3", `nvml.0.name = NVIDIA ${HOSTILE} H100`)
        .replace("nvml.driver = 550.54.15", `nvml.driver = 550${HOSTILE}`),
    );
    const env = {
      ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }),
      GPUPLAN_FAKE_SCENARIO: scenario,
    };
    const table = gpuplan(["detect"], { env });
    expect(table.exitCode, table.stderr).toBe(0);
    expectClean(table.stdout);
    expectClean(table.stderr);
    expect(table.stdout).toContain(`NVIDIA ${SHOWN} H100`);
    const json = gpuplan(["detect", "--json"], { env });
    expect(JSON.parse(json.stdout).gpus[0].name).toBe(`NVIDIA ${HOSTILE} H100`);
  });
});

describe("locks: labels from the shared lock directory", () => {
  it("holder labels, a GPU id and a UUID with escapes, and a warm-worker file with escapes", async () => {
    const dir = temp();
    const uuid = "GPU-\u001b[2J\u0007-0000";
    const lock = createSlotLock({ dir });
    const holder = {
      pid: process.pid,
      run: `run${HOSTILE}`,
      pipeline: `pipe${HOSTILE}`,
      step: `step${HOSTILE}`,
      since: `now${HOSTILE}`,
    };
    const lease = await lock.acquire({ uuid, gpu: `cuda:0${HOSTILE}`, maxPipelines: 2, holder, wait: false });
    cleanups.push(() => lease.release());
    // The lock writes `since` itself; a record anyone who can write the lock file can rewrite may say anything.
    const file = join(dir, readdirSync(dir).find((f) => f.endsWith(".gpu.lock"))!);
    const at = recordOffset(0);
    const record = JSON.parse(
      readFileSync(file)
        .subarray(at, at + RECORD_SIZE)
        .toString(),
    );
    const fd = openSync(file, "r+");
    writeSync(
      fd,
      Buffer.from(JSON.stringify({ ...record, since: `now${HOSTILE}` }).padEnd(RECORD_SIZE)),
      0,
      RECORD_SIZE,
      at,
    );
    closeSync(fd);
    writeFileSync(
      join(dir, `warm.${process.pid}.json`),
      JSON.stringify({
        pid: process.pid,
        host: (await import("node:os")).hostname(),
        run: `run${HOSTILE}`,
        workers: [{ key: `key${HOSTILE}`, gpu: `cuda:0${HOSTILE}`, pid: null, busy: false, idleSince: null }],
      }),
    );
    const r = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: dir } });
    expect(r.exitCode, r.stderr).toBe(0);
    expectClean(r.stdout);
    for (const label of ["pipe", "step", "now", "key", "cuda:0"])
      expect(r.stdout).toContain(`${label}${SHOWN}`);
    expect(r.stdout).toContain("GPU-\\x1b[2J\\x07-00 ");
  });
});

describe("run: names and commands from the pipeline file, and a step's output", () => {
  const MISSING = "/nonexistent/gpuplan-test-library.so";
  const NO_GPU = {
    GPUPLAN_NVML_LIBRARY: MISSING,
    GPUPLAN_CUDA_LIBRARY: MISSING,
    GPUPLAN_ROCM_SMI_LIBRARY: MISSING,
    GPUPLAN_AMD_SMI_LIBRARY: MISSING,
    GPUPLAN_HIP_LIBRARY: MISSING,
    CI: "1",
  };
  // YAML's "\e" is ESC, "\a" BEL, "\r" CR; the step prints a screen clear, a bell and a title.
  const pipelineFile = (dir: string): string => {
    const file = join(dir, "hostile.yaml");
    writeFileSync(
      file,
      [
        "version: 1",
        'name: "plan\\e]0;pwned\\a"',
        "registry:",
        "  platform_priority: [cpu]",
        "pipelines:",
        '  - name: "p\\e[2J\\rX\\a"',
        "    steps:",
        "      - id: s",
        `        run: [node, -e, "process.stdout.write('\\\\u001b[2J\\\\u0007out\\\\u001b]0;t\\\\u0007\\\\n'); process.stderr.write('err\\\\u001b[31m\\\\n'); process.exit(3)"]`,
        "        memory: numpy",
        "        estimate: 1s",
        "",
      ].join("\n"),
    );
    return file;
  };

  it("--dry-run shows the pipeline name, the plan name and the command escaped", () => {
    const dir = temp();
    const r = gpuplan(["run", pipelineFile(dir), "--dry-run"], { cwd: dir, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    expectClean(r.stdout);
    expect(r.stdout).toContain("pipeline p\\x1b[2J\\rX\\x07 on cpu");
    expect(r.stdout).toContain("plan\\x1b]0;pwned\\x07");
  });

  it("--ui plain shows names, output lines and the failure summary escaped", () => {
    const dir = temp();
    const r = gpuplan(["run", pipelineFile(dir), "--ui", "plain"], { cwd: dir, env: NO_GPU });
    expect(hasCrashed(r)).toBe(false);
    expect(r.exitCode, r.stderr).toBe(1);
    expectClean(r.stderr);
    expect(r.stderr).toContain("[p\\x1b[2J\\rX\\x07/s cpu] \\x1b[2J\\x07out\\x1b]0;t\\x07");
    expect(r.stderr).toContain("✗ p\\x1b[2J\\rX\\x07/s on cpu: exit 3");
    // A step's colour codes are dropped under NO_COLOR, not shown as text.
    expect(r.stderr).toMatch(/^ {4}err$/m);
  });
});

describe("run: a plan or pipeline name too long to read", () => {
  const NO_GPU = {
    GPUPLAN_NVML_LIBRARY: "/nonexistent/gpuplan-test-library.so",
    GPUPLAN_CUDA_LIBRARY: "/nonexistent/gpuplan-test-library.so",
    GPUPLAN_ROCM_SMI_LIBRARY: "/nonexistent/gpuplan-test-library.so",
    GPUPLAN_AMD_SMI_LIBRARY: "/nonexistent/gpuplan-test-library.so",
    GPUPLAN_HIP_LIBRARY: "/nonexistent/gpuplan-test-library.so",
    CI: "1",
  };
  // 100,000 characters each (short enough for the step's GPUPLAN_PIPELINE to start it), told
  // apart at their ends as a template's expansions are.
  const PLAN = `${"n".repeat(99_990)}-plan-tail`;
  const PIPELINE = `${"p".repeat(99_990)}-plate-17`;
  /** What a cut name shows: its first 200 and last 40 characters around …. */
  const cut = (name: string) => `${name.slice(0, 200)}…${name.slice(-40)}`;
  const pipelineFile = (dir: string): string => {
    const file = join(dir, "long.yaml");
    writeFileSync(
      file,
      [
        "version: 1",
        `name: ${PLAN}`,
        "pipelines:",
        `  - name: ${PIPELINE}`,
        "    steps:",
        "      - { id: s, run: [node, -e, \"console.log('out')\"], memory: numpy, estimate: 1s }",
        "",
      ].join("\n"),
    );
    return file;
  };

  it("--dry-run shows each cut to its start and end and says so; --ui json keeps them whole", () => {
    const dir = temp();
    const r = gpuplan(["run", pipelineFile(dir), "--dry-run"], { cwd: dir, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    // The names were printed whole: 300 KB (the plan's, the pipeline's and its GPUPLAN_PIPELINE).
    expect(r.stdout.length).toBeLessThan(5_000);
    expect(r.stdout).toContain(`1 pipeline of ${cut(PLAN)}; nothing was started`);
    expect(r.stdout).toContain(`pipeline ${cut(PIPELINE)} on cpu`);
    expect(r.stdout).toContain(
      "… marks text cut to fit a terminal; gpuplan run --dry-run --json shows it whole",
    );
    const json = gpuplan(["run", pipelineFile(dir), "--dry-run", "--ui", "json"], { cwd: dir, env: NO_GPU });
    expect(json.exitCode, json.stderr).toBe(0);
    const doc = JSON.parse(json.stdout);
    expect(doc.plan).toBe(PLAN);
    expect(doc.pipelines[0].name).toBe(PIPELINE);
  });

  it("--ui plain cuts the name each of its lines starts with", () => {
    const dir = temp();
    const r = gpuplan(["run", pipelineFile(dir), "--ui", "plain"], { cwd: dir, env: NO_GPU });
    expect(hasCrashed(r)).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    // Each of the step's lines (started, its output, finished) carried the whole name: 300 KB.
    expect(r.stderr.length).toBeLessThan(5_000);
    expect(r.stderr).toContain(`[${cut(PIPELINE)}/s cpu] out`);
  });
});

describe("compile: the pipeline file's own bytes in messages and code frames", () => {
  it("control characters in the file are escaped in the code frame, the caret under the same character", () => {
    const dir = temp();
    mkdirSync(join(dir, "p"));
    const file = join(dir, "p", "bad.yaml");
    writeFileSync(
      file,
      "version: 1\nname: x\npipelines:\n  - name: a\n    steps:\n      - id: s\n        run: [x]\n        \u001b[2Jbogus\u0007: 1\n",
    );
    const human = gpuplan(["compile", file, "--target", "dgx-h100"]);
    expect(human.exitCode).toBe(1);
    expectClean(human.stderr);
    const lines = human.stderr.split("\n");
    const at = lines.findIndex((l) => l.startsWith("  > 8 | "));
    expect(lines[at]).toBe("  > 8 |         \\x1b[2Jbogus\\x07: 1");
    // The problem is at the raw line's column 19, the `:` after the BEL: the caret is under it.
    const caret = lines[at + 1]!.indexOf("^");
    expect(lines[at]![caret]).toBe(":");
    const github = gpuplan(["compile", file, "--target", "dgx-h100", "--format", "github"]);
    expectClean(github.stdout);
  });

  it("a key spelled with YAML escapes is quoted escaped in the message, human and github alike", () => {
    const file = join(temp(), "key.yaml");
    writeFileSync(
      file,
      'version: 1\nname: x\npipelines:\n  - name: a\n    steps:\n      - id: s\n        run: [x]\n        "\\e[2Jbogus\\a": 1\n',
    );
    const human = gpuplan(["compile", file, "--target", "dgx-h100"]);
    expect(human.exitCode).toBe(1);
    expectClean(human.stderr);
    expect(human.stderr).toContain("\\x1b[2Jbogus\\x07");
    const github = gpuplan(["compile", file, "--target", "dgx-h100", "--format", "github"]);
    expectClean(github.stdout);
    expect(github.stdout).toContain("\\x1b[2Jbogus\\x07");
  });
});

describe("failures: arguments and paths quoted in the error line", () => {
  const EXAMPLE = "examples/hello-cpu.yaml";
  const cases: [string, string[]][] = [
    ["explain CODE", ["explain", HOSTILE]],
    ["status RUN", ["status", HOSTILE]],
    ["report RUN", ["report", HOSTILE]],
    ["compile FILE", ["compile", HOSTILE]],
    ["run FILE", ["run", HOSTILE]],
    ["compile --target NAME", ["compile", EXAMPLE, "--target", HOSTILE]],
    ["compile --history RUN", ["compile", EXAMPLE, "--history", `x${HOSTILE}`]],
    ["completion SHELL (commander's message)", ["completion", HOSTILE]],
    ["runs --keep N (commander's message)", ["runs", "--keep", HOSTILE]],
    ["an unknown option (commander's message)", [`--bogus${HOSTILE}`]],
  ];
  it.each(cases)("%s: shown escaped, the message otherwise the same", (_, args) => {
    const r = gpuplan(args);
    expect(hasCrashed(r)).toBe(false);
    expect(r.exitCode).not.toBe(0);
    expectClean(r.stderr);
    expect(r.stderr).toMatch(/^gpuplan: error: .*\\x1b\]0;pwned\\x07\\x1b\[2J\\rX\\u202e.* {2}\[[a-z-]+\]$/m);
  });

  it("--format json keeps the argument as it is, as data", () => {
    const r = gpuplan(["compile", HOSTILE, "--format", "json"]);
    expect(r.exitCode).not.toBe(0);
    expectClean(r.stderr);
    expect(JSON.parse(r.stdout).problems[0].message).toBe(
      `cannot read pipeline file ${HOSTILE}: no such file`,
    );
  });
});

describe("compile: a newline in a name cannot forge a problem line", () => {
  /** A line that looks like a located problem but is not the one gpuplan reported. */
  const FORGED_LINE = /^fake\.yaml:\d+:\d+ {2}error/m;

  it("a need and a pipeline name with newlines: one line in the human format, the text kept in json", () => {
    const file = join(temp(), "p.yaml");
    writeFileSync(
      file,
      [
        "version: 1",
        "name: x",
        "pipelines:",
        '  - name: "a\\nfake.yaml:1:1  error  forged-name"',
        "    steps:",
        "      - id: s",
        "        run: [x]",
        "        memory: numpy",
        '        needs: ["q\\nfake.yaml:9:9  error  forged"]',
        "",
      ].join("\n"),
    );
    const human = gpuplan(["compile", file, "--target", "dgx-h100"]);
    expect(human.exitCode).toBe(1);
    expect(human.stderr).not.toMatch(FORGED_LINE);
    expect(human.stderr).toContain(
      "error  step `s` needs `q\\nfake.yaml:9:9  error  forged`, which is not a step of pipeline `a\\nfake.yaml:1:1  error  forged-name`  [unknown-need]",
    );
    const json = gpuplan(["compile", file, "--target", "dgx-h100", "--format", "json"]);
    expect(JSON.parse(json.stdout).problems[0].message).toContain("`q\nfake.yaml:9:9  error  forged`");
    const github = gpuplan(["compile", file, "--target", "dgx-h100", "--format", "github"]);
    expect(github.stdout).toContain("q%0Afake.yaml:9:9  error  forged");
    expect(github.stdout.trimEnd().split("\n")).toHaveLength(1);
  });

  it("a plan's gpuplanVersion with a newline in the stale-plan message", () => {
    const dir = temp();
    const pipeline = join(dir, "p.yaml");
    writeFileSync(
      pipeline,
      "version: 1\nname: x\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: [x], memory: numpy }\n",
    );
    const plan = join(dir, "plan.json");
    expect(gpuplan(["compile", pipeline, "--target", "cpu-only", "-o", plan]).exitCode).toBe(0);
    const data = JSON.parse(readFileSync(plan, "utf8"));
    writeFileSync(plan, JSON.stringify({ ...data, gpuplanVersion: "0.1.0\nfake.yaml:1:1  error  forged" }));
    const r = gpuplan(["compile", pipeline, "--target", "cpu-only", "--check", plan]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).not.toMatch(FORGED_LINE);
    expect(r.stderr).toContain("written by gpuplan 0.1.0\\nfake.yaml:1:1  error  forged, this is");
  });
});

describe("compile and targets: names from plans, file names and custom target files", () => {
  const PIPELINE =
    "version: 1\nname: x\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: [x], memory: numpy }\n";

  it("a --check plan's inventory label naming an unknown target, and `wrote PATH`", () => {
    const dir = temp();
    const pipeline = join(dir, "p.yaml");
    writeFileSync(pipeline, PIPELINE);
    const out = join(dir, `plan${HOSTILE}.json`);
    const wrote = gpuplan(["compile", pipeline, "--target", "cpu-only", "-o", out]);
    expect(wrote.exitCode, wrote.stderr).toBe(0);
    expectClean(wrote.stderr);
    expect(wrote.stderr).toContain(`wrote ${dir}/plan${SHOWN}.json`);
    const upToDate = gpuplan(["compile", pipeline, "--check", out]);
    expectClean(upToDate.stderr);
    expect(upToDate.stderr).toContain(`plan${SHOWN}.json is up to date`);

    const plan = JSON.parse(readFileSync(out, "utf8"));
    const stale = join(dir, "stale.json");
    writeFileSync(
      stale,
      JSON.stringify({ ...plan, inventory: { ...plan.inventory, label: `target:nope${HOSTILE}` } }),
    );
    const r = gpuplan(["compile", pipeline, "--check", stale]);
    expect(r.exitCode).toBe(2);
    expectClean(r.stderr);
    expect(r.stderr).toContain(`unknown target \`nope${SHOWN}\``);
  });

  it("custom target files: their names in `known targets:` and `gpuplan targets`, their GPU names", () => {
    const dir = temp();
    mkdirSync(join(dir, ".gpuplan/targets"), { recursive: true });
    writeFileSync(
      join(dir, ".gpuplan/targets", `evil${HOSTILE}.yaml`),
      'gpus:\n  - { name: "GPU\\e]0;pwned\\a\\r", memory: 8GiB }\ncpu: { threads: 4 }\n',
    );
    writeFileSync(join(dir, "p.yaml"), PIPELINE);
    const unknown = gpuplan(["compile", "p.yaml", "--target", "nope"], { cwd: dir });
    expect(unknown.exitCode).toBe(2);
    expectClean(unknown.stderr);
    expect(unknown.stderr).toContain(`, evil${SHOWN.toLowerCase()} (gpuplan targets`);
    const list = gpuplan(["targets"], { cwd: dir });
    expect(list.exitCode, list.stderr).toBe(0);
    expectClean(list.stdout);
    expect(list.stdout).toMatch(
      /^evil\\x1b\]0;pwned\\x07\\x1b\[2j\\rx\\u202e +1× GPU\\x1b\]0;pwned\\x07\\r 8 GiB +4 threads$/m,
    );
  });
});

describe("compile --history: a run folder's own records", () => {
  it("a journal whose baseDir holds escapes is left out in a note shown escaped", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "g.yaml"),
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [node, -e, '0'], memory: numpy }\n",
    );
    const env = { GPUPLAN_NVML_LIBRARY: "/nonexistent/x.so", GPUPLAN_CUDA_LIBRARY: "/nonexistent/x.so" };
    expect(gpuplan(["run", "g.yaml", "--ui", "plain"], { cwd, env }).exitCode).toBe(0);
    const [id] = readdirSync(join(cwd, ".gpuplan/runs"));
    const journal = join(cwd, ".gpuplan/runs", id!, "journal.jsonl");
    const [head, ...rest] = readFileSync(journal, "utf8").split("\n");
    writeFileSync(
      journal,
      [JSON.stringify({ ...JSON.parse(head!), baseDir: `/${HOSTILE}` }), ...rest].join("\n"),
    );
    const r = gpuplan(["compile", "g.yaml", "--target", "cpu-only", "--history", id!, "-o", "plan.json"], {
      cwd,
    });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.stderr).toContain(`history: left out run ${id}`);
    expect(r.stderr).toContain(SHOWN);
    expectClean(r.stderr);
  });
});
