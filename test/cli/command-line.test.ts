// The command line itself: usage errors show the command's usage line and a hint (not the whole
// help), carry a code, and keep the requested report format; -v is the version; `compile -` reads
// stdin; --check never suggests overwriting a file that is not a plan; counts read naturally;
// our own bugs print versions and how to report them.
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join } from "node:path";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { stderr, stdout } from "../../src/cli/output-guard.js";
import { reportFailure } from "../../src/cli/report-failure.js";
import validateReport from "../../src/generated/compile-report-validator.js";
import { VERSION } from "../../src/version.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

const EXAMPLE = join(ROOT, "examples/cell-painting.yaml");
let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

describe("usage errors", () => {
  // `compile --history auto p.yaml` said only "missing required argument 'file'": the variadic
  // --history had taken the pipeline file as a run, and the user had given it.
  it("a pipeline file --history took as a run is named, with the order that works", () => {
    writeFileSync(join(t.dir, "p.yaml"), "version: 1\n");
    const r = gpuplan(["compile", "--history", "auto", "p.yaml", "-o", "plan.json"], { cwd: t.dir });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      "gpuplan: error: missing required argument 'file': --history took every word after it as a run, `p.yaml` too  [missing-argument]\n" +
        "  usage: gpuplan compile [options] <file>\n" +
        "  hint: put the pipeline file before --history: gpuplan compile p.yaml --history auto; see gpuplan compile --help\n",
    );
    expect(existsSync(join(t.dir, "plan.json"))).toBe(false);
    // No file at all: as before.
    const none = gpuplan(["compile", "--history", "auto"], { cwd: t.dir });
    expect(none.stderr).toContain("gpuplan: error: missing required argument 'file'  [missing-argument]");
  });

  it("print the usage line and a hint, not the whole help", () => {
    const r = gpuplan(["compile", EXAMPLE, "--outptu", "x.json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe("");
    expect(r.stderr).toBe(
      "gpuplan: error: unknown option '--outptu'  [unknown-option]\n" +
        "  usage: gpuplan compile [options] <file>\n" +
        "  hint: did you mean --output? see gpuplan compile --help\n",
    );
  });

  it.each([
    [["compil"], "unknown-command", "gpuplan [options] [command]"],
    [["compile"], "missing-argument", "gpuplan compile [options] <file>"],
    [["compile", "a.yaml", "b.yaml"], "too-many-arguments", "gpuplan compile [options] <file>"],
    [["compile", "a.yaml", "-o"], "option-missing-value", "gpuplan compile [options] <file>"],
    [["run", "p.json", "--ui", "fancy"], "invalid-option-value", "gpuplan run [options] [plan]"],
    [
      ["compile", "a.yaml", "--json", "--format", "github"],
      "conflicting-options",
      "gpuplan compile [options] <file>",
    ],
    [["detect", "--timeout", "1y"], "invalid-duration", "gpuplan detect [options]"],
    [["locks", "ini"], "unknown-command", "gpuplan locks [options] [command]"],
    [["help", "comple"], "unknown-command", "gpuplan [options] [command]"],
  ])("%j → %s", (args, code, usage) => {
    const r = gpuplan(args);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`^gpuplan: error: .*  \\[${code}\\]\\n`));
    expect(r.stderr).toContain(`\n  usage: ${usage}\n`);
    expect(r.stderr).toMatch(/\n {2}hint: .*see gpuplan[a-z ]* --help\n$/);
    expect(r.stderr).not.toContain("Options:");
    expect(hasCrashed(r)).toBe(false);
  });

  it("a misspelt subcommand or help topic is an unknown command with a suggestion (locks ini read as 'too many arguments'; help comple printed the whole help)", () => {
    for (const [args, word, suggestion] of [
      [["locks", "ini"], "ini", "did you mean init?"],
      [["locks", "--json", "int"], "int", "did you mean init?"],
      [["help", "comple"], "comple", "did you mean compile?"],
      [["help", "nope"], "nope", undefined],
    ] as const) {
      const r = gpuplan([...args]);
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toMatch(
        new RegExp(`^gpuplan: error: unknown command '${word}'  \\[unknown-command\\]\\n`),
      );
      if (suggestion) expect(r.stderr).toContain(`hint: ${suggestion} see gpuplan`);
      expect(r.stderr).not.toContain("Commands:");
    }
    for (const args of [
      ["help"],
      ["help", "compile"],
      ["help", "locks", "init"],
      ["locks", "init", "--help"],
    ]) {
      const r = gpuplan(args);
      expect(r.exitCode, args.join(" ")).toBe(0);
      expect(r.stdout).toMatch(/^Usage: gpuplan /);
    }
  });

  it('an empty path (`-o "$OUT"` with OUT unset) is an invalid value, never the current or the runs folder', () => {
    // A run in the runs folder: --history "" read the folder itself as a run (exit 1).
    mkdirSync(join(t.dir, ".gpuplan/runs/20261122T011500Z-3fa9c1"), { recursive: true });
    writeFileSync(join(t.dir, "plan.json"), "{}");
    const cases: [string[], string][] = [
      [["compile", EXAMPLE, "--history", ""], "--history <runs...>"],
      [["compile", EXAMPLE, "--history", "auto", ""], "--history <runs...>"],
      [["compile", EXAMPLE, "-o", ""], "-o, --output <plan>"],
      [["compile", EXAMPLE, "--inventory", ""], "--inventory <file>"],
      [["compile", EXAMPLE, "--targets-dir", ""], "--targets-dir <dir>"],
      [["compile", EXAMPLE, "--check", "plan.json", "--check", ""], "--check <plan>"],
      [["compile", EXAMPLE, "--lock-dir", ""], "--lock-dir <dir>"],
      [["detect", "--save", ""], "--save <file>"],
      [["detect", "--lock-dir", ""], "--lock-dir <dir>"],
      [["run", "plan.json", "--events", ""], "--events <file>"],
      [["run", "--resume", ""], "--resume <run>"],
      [["run", "plan.json", "--inventory", ""], "--inventory <file>"],
      [["run", "plan.json", "--lock-dir", ""], "--lock-dir <dir>"],
      [["export", "plan.json", "--to", "slurm", "-o", ""], "-o, --output <dir>"],
      [["export", "plan.json", "--to", "slurm", "-o", "out", "--inventory", ""], "--inventory <file>"],
      [["report", "-o", ""], "-o, --output <file>"],
      [["targets", "--targets-dir", ""], "--targets-dir <dir>"],
      [["locks", "--lock-dir", ""], "--lock-dir <dir>"],
    ];
    for (const [args, option] of cases) {
      const r = gpuplan(args, { cwd: t.dir });
      expect(r.stderr, args.join(" ")).toMatch(
        new RegExp(
          `^gpuplan: error: option '${option.replace(/[.*+?^${}()|[\]\\]/g, "\\$&")}' argument '' is invalid\\. It is empty: name a file or folder\\.  \\[invalid-option-value\\]\\n`,
        ),
      );
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(hasCrashed(r)).toBe(false);
    }
    expect(existsSync(join(t.dir, "out"))).toBe(false);
  });

  it("an empty argument where a file, plan or run is named is a usage error (it read as 'cannot read plan : no such file', or a run folder called '')", () => {
    const cases: [string[], string][] = [
      [["compile", ""], "file"],
      [["run", ""], "plan"],
      [["export", "", "--to", "slurm", "-o", "out"], "plan"],
      [["status", ""], "run"],
      [["report", ""], "run"],
    ];
    for (const [args, name] of cases) {
      const r = gpuplan(args, { cwd: t.dir });
      expect(r.stderr, args.join(" ")).toMatch(
        new RegExp(
          `^gpuplan: error: command-argument value '' is invalid for argument '${name}'\\. It is empty: name a file or folder\\.  \\[invalid-option-value\\]\\n`,
        ),
      );
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(hasCrashed(r)).toBe(false);
    }
    expect(existsSync(join(t.dir, "out"))).toBe(false);
  });

  it("under --format json (or --json), a bad flag and a missing file are still a JSON report on stdout", () => {
    for (const args of [
      ["compile", EXAMPLE, "--format", "json", "--frobnicate"],
      ["compile", EXAMPLE, "--json", "--frobnicate"],
      ["compile", "missing.yaml", "--format=json"],
      ["compile", "--format", "json"],
    ]) {
      const r = gpuplan(args, { cwd: t.dir });
      expect(r.exitCode, args.join(" ")).toBe(2);
      expect(r.stderr, args.join(" ")).toBe("");
      const report = JSON.parse(r.stdout);
      expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
      expect(report).toMatchObject({ ok: false, errors: 1, warnings: 0, output: null, plan: null });
      expect(report.problems[0].severity).toBe("error");
      expect(report.problems[0].hint).toBeTruthy();
    }
    const missing = JSON.parse(gpuplan(["compile", "missing.yaml", "--json"], { cwd: t.dir }).stdout);
    expect(missing.problems[0]).toMatchObject({
      code: "unreadable-file",
      message: "cannot read pipeline file missing.yaml: no such file",
    });
  });

  it("under --format github, a usage error is an ::error annotation on stdout (and a line on stderr)", () => {
    const r = gpuplan(["compile", "missing.yaml", "--format", "github"], { cwd: t.dir });
    expect(r.exitCode).toBe(2);
    expect(r.stdout).toBe(
      "::error title=gpuplan unreadable-file::cannot read pipeline file missing.yaml: no such file%0Ahint: check the path (a relative path starts from the current folder)\n",
    );
    expect(r.stderr).toContain("[unreadable-file]");
    const flag = gpuplan(["compile", EXAMPLE, "--format", "github", "--nope"]);
    expect(flag.stdout).toMatch(/^::error title=gpuplan unknown-option::unknown option '--nope'/);
  });

  it("-v, -V and --version print the version", () => {
    for (const flag of ["-v", "-V", "--version"]) {
      const r = gpuplan([flag]);
      expect(r.exitCode).toBe(0);
      expect(r.stdout).toBe(`${VERSION}\n`);
    }
  });
});

describe("a 100,000-character argument in a failure", () => {
  const huge = "x".repeat(100_000);
  it.each([
    ["status RUN", ["status", huge]],
    ["report RUN", ["report", huge]],
    ["compile FILE", ["compile", huge]],
    ["compile --target NAME", ["compile", "examples/hello-cpu.yaml", "--target", huge]],
    ["detect --timeout (commander's message)", ["detect", "--timeout", huge]],
    ["an unknown option (commander's message)", [`--${huge}`]],
  ])("%s: shown cut to its start and end, not echoed whole (status: 200 KB on one line)", (_, args) => {
    const r = gpuplan(args, { cwd: ROOT });
    expect(r.exitCode).toBe(2);
    expect(hasCrashed(r)).toBe(false);
    expect(r.stderr).toMatch(/^gpuplan: error: .*x{150,}…x{30,}[^x].*\[[a-z-]+\]$/m);
    expect(r.stderr.length).toBeLessThan(2000);
  });

  it("--json keeps the whole argument, as data", () => {
    const r = gpuplan(["status", huge, "--json"], { cwd: ROOT });
    expect(r.exitCode).toBe(2);
    expect((JSON.parse(r.stdout) as { problems: { message: string }[] }).problems[0]!.message).toContain(
      huge,
    );
  });
});

describe("compile", () => {
  it("`compile -` reads the pipeline from stdin; problems name <stdin>", () => {
    const text = readFileSync(EXAMPLE, "utf8");
    const fromFile = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100"]);
    const fromStdin = gpuplan(["compile", "-", "--target", "dgx-h100"], { input: text });
    expect(fromStdin.exitCode, fromStdin.stderr).toBe(0);
    const a = JSON.parse(fromFile.stdout);
    const b = JSON.parse(fromStdin.stdout);
    expect(b.source.file).toBe("<stdin>");
    expect(JSON.parse(JSON.stringify(b.pipelines).replaceAll("<stdin>", basename(EXAMPLE)))).toEqual(
      a.pipelines,
    );
    const bad = gpuplan(["compile", "-", "--target", "dgx-h100"], { input: "version: 1\npipelines: 3\n" });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toMatch(/^<stdin>:2:\d+ +error/m);
  });

  it("--check against a file that is not a plan never suggests overwriting it", () => {
    const pipeline = join(t.dir, "p.yaml");
    writeFileSync(pipeline, readFileSync(EXAMPLE));
    // The classic slip: the pipeline file given to --check.
    const r = gpuplan(["compile", pipeline, "--target", "dgx-h100", "--check", pipeline]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("[invalid-plan]");
    expect(r.stderr).not.toContain(`-o ${pipeline}`);
    const plan = join(t.dir, "plan.json");
    expect(gpuplan(["compile", pipeline, "--target", "dgx-a100-80gb", "-o", plan]).exitCode).toBe(0);
    const stale = gpuplan(["compile", pipeline, "--target", "dgx-h100", "--check", plan]);
    expect(stale.stderr).toContain(`hint: run: gpuplan compile ${pipeline} --target dgx-h100 -o ${plan}`);
  });

  it("counts read naturally: 1 pipeline, on 1 GPU; all on CPU", () => {
    const one = join(t.dir, "one.yaml");
    writeFileSync(
      one,
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [x], memory: torch, vram: 1GiB }\n",
    );
    expect(gpuplan(["compile", one, "--target", "rtx4090"]).stderr).toMatch(
      /^gpuplan compile: 1 pipeline \(1 on 1 GPU\), est\. makespan/m,
    );
    const cpu = gpuplan(["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only"]);
    expect(cpu.stderr).toMatch(/^gpuplan compile: 3 pipelines \(all on CPU\), /m);
  });
});

describe("internal errors", () => {
  // gpuplan's texts go out with write(2) until Node's stream is handed out (output-guard.ts);
  // handing both out first sends them through process.stdout/stderr.write, where the spies are.
  beforeEach(() => {
    stdout();
    stderr();
  });

  it("print the versions, how to report it, and the stack, with exit 2; a JSON report says internal-error", () => {
    const err: string[] = [];
    const out: string[] = [];
    const spies = [
      vi.spyOn(process.stderr, "write").mockImplementation((s) => err.push(String(s)) > 0),
      vi.spyOn(process.stdout, "write").mockImplementation((s) => out.push(String(s)) > 0),
    ];
    try {
      const bug = new TypeError("boom");
      expect(reportFailure(bug, "human")).toBe(2);
      expect(reportFailure(bug, "json")).toBe(2);
    } finally {
      for (const spy of spies) spy.mockRestore();
    }
    const human = err[0]!;
    expect(human).toMatch(/^gpuplan: error: internal error: boom {2}\[internal-error\]\n/);
    expect(human).toContain("this is a bug in gpuplan, not something you did wrong; please report it");
    expect(human).toContain(
      `gpuplan ${VERSION}, Node ${process.version}, ${process.platform}-${process.arch}`,
    );
    expect(human).toMatch(/\n {2}at /);
    expect(JSON.parse(out.join("")).problems[0]).toMatchObject({
      code: "internal-error",
      message: "internal error: boom",
    });
    // The JSON report is the result; the stack still reaches the person on stderr.
    expect(err[1]).toBe(human);
  });

  it("a file-system refusal outside the files the user named is theirs to fix, not a bug", () => {
    const err: string[] = [];
    const spy = vi.spyOn(process.stderr, "write").mockImplementation((s) => err.push(String(s)) > 0);
    try {
      const eacces = Object.assign(new Error("EACCES: permission denied, mkdir '.gpuplan/runs'"), {
        code: "EACCES",
        syscall: "mkdir",
        path: ".gpuplan/runs",
      });
      expect(reportFailure(eacces, "human")).toBe(2);
    } finally {
      spy.mockRestore();
    }
    expect(err.join("")).toMatch(
      /^gpuplan: error: cannot mkdir \.gpuplan\/runs: EACCES {2}\[file-system-error\]\n {2}hint: /,
    );
  });
});
