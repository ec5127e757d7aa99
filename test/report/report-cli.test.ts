// `gpuplan report` through the built CLI: the newest run by default, stdout when piped, a plan
// file, what it says when there is nothing to report on, and that `--help` and `compile` never
// load the report's code.
import { spawnSync } from "node:child_process";
import {
  cpSync,
  existsSync,
  lstatSync,
  mkdirSync,
  readFileSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { basename, join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterAll, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, loadedModules, ROOT, tempDir } from "../helpers/cli.js";
import { NO_GPU, runCpuExample, runIds } from "./helpers/runs.js";

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});
const temp = () => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};
const hasScript = spawnSync("script", ["--version"], { encoding: "utf8" }).status === 0;

/** gpuplan with stdout on a pseudo-terminal (util-linux `script`), where report writes to its default path. */
function onTerminal(args: string[], cwd: string) {
  const quoted = [process.execPath, join(ROOT, "bin/gpuplan.js"), ...args].map((a) => `'${a}'`).join(" ");
  return spawnSync("script", ["-qec", quoted, "/dev/null"], {
    cwd,
    encoding: "utf8",
    timeout: 30_000,
    env: { ...process.env, ...NO_GPU },
  });
}

describe("gpuplan report (CLI)", () => {
  it("reports the newest run on stdout when piped, and says what it wrote on stderr", () => {
    const cwd = temp();
    runCpuExample(cwd);
    const r = gpuplan(["report"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^<!doctype html>/);
    expect(r.stdout).toContain(`<title>gpuplan report — run ${runIds(cwd)[0]}</title>`);
    // Self-contained: no URL the page would fetch, and a policy that allows no network.
    expect(r.stdout).not.toMatch(/\b(src|href)=["']?(https?:)?\/\//);
    expect(r.stdout).toContain("default-src 'none'");
    expect(r.stderr).toMatch(
      /^gpuplan report: run \S+: 9 steps, 9 attempts, ok; on stdout \(\d+(\.\d)? KiB\)\n$/,
    );
  }, 30_000);

  it("counts one step and one attempt in the singular (1 step, 1 attempt; not 1 steps)", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "one.yaml"),
      "version: 1\nname: one\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [node, -e, '0'], memory: numpy }\n",
    );
    const ran = gpuplan(["run", "one.yaml", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(ran.exitCode, ran.stderr).toBe(0);
    const run = gpuplan(["report", "-o", "run.html"], { cwd, env: NO_GPU });
    expect(run.exitCode, run.stderr).toBe(0);
    expect(run.stderr).toMatch(/^gpuplan report: run \S+: 1 step, 1 attempt, ok; wrote run\.html/);
    const compiled = gpuplan(["compile", "one.yaml", "-o", "plan.json"], { cwd, env: NO_GPU });
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    const plan = gpuplan(["report", "plan.json", "-o", "plan.html"], { cwd, env: NO_GPU });
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(plan.stderr).toMatch(/plan one: 1 step; wrote plan\.html/);
  }, 30_000);

  it("writes -o atomically; a run id or folder picks the run; a plan file gives the plan's page", () => {
    const cwd = temp();
    runCpuExample(cwd);
    const [id] = runIds(cwd);
    const byId = gpuplan(["report", id!, "-o", "a.html"], { cwd, env: NO_GPU });
    expect(byId.exitCode, byId.stderr).toBe(0);
    expect(byId.stderr).toContain("wrote a.html");
    const byDir = gpuplan(["report", join(".gpuplan/runs", id!), "-o", "b.html"], { cwd, env: NO_GPU });
    expect(byDir.exitCode, byDir.stderr).toBe(0);
    expect(readFileSync(join(cwd, "b.html"), "utf8")).toBe(readFileSync(join(cwd, "a.html"), "utf8"));
    const compiled = gpuplan(
      ["compile", join(ROOT, "examples/cell-painting.yaml"), "--target", "dgx-h100", "-o", "plan.json"],
      { cwd, env: NO_GPU },
    );
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    const plan = gpuplan(["report", "plan.json", "-o", "plan.html"], { cwd, env: NO_GPU });
    expect(plan.exitCode, plan.stderr).toBe(0);
    expect(plan.stderr).toMatch(/plan cell-painting: 32 steps; wrote plan\.html/);
    expect(readFileSync(join(cwd, "plan.html"), "utf8")).toContain("Why each pipeline is where it is");
  }, 30_000);

  it("-o never names what the report reads: the run's records, or the plan (it replaced them with the page)", () => {
    const cwd = temp();
    runCpuExample(cwd);
    const [id] = runIds(cwd);
    const run = join(".gpuplan/runs", id!);
    const log = readFileSync(join(cwd, run, "logs/plate-P1@generate.out.log"), "utf8");
    symlinkSync(join(run, "events.jsonl"), join(cwd, "events-link"));
    const record = (name: string) => readFileSync(join(cwd, run, name), "utf8");
    const records = {
      events: record("events.jsonl"),
      journal: record("journal.jsonl"),
      plan: record("plan.json"),
    };
    for (const [out, shown] of [
      [join(run, "events.jsonl"), "events.jsonl"],
      [join(run, "journal.jsonl"), "journal.jsonl"],
      [join(run, "plan.json"), "plan.json"],
      [join(run, "logs/plate-P1@generate.out.log"), "logs/plate-P1@generate.out.log"],
      ["events-link", "events.jsonl"],
    ] as const) {
      const r = gpuplan(["report", id!, "-o", out], { cwd, env: NO_GPU });
      expect(r.exitCode, out).toBe(2);
      expect(r.stderr).toContain(
        `gpuplan: error: -o ${out} is ${shown} in the run folder ${run}, which this report reads: writing the report there would destroy the run's records  [conflicting-options]`,
      );
      expect(hasCrashed(r)).toBe(false);
    }
    expect(record("events.jsonl")).toBe(records.events);
    expect(record("journal.jsonl")).toBe(records.journal);
    expect(record("plan.json")).toBe(records.plan);
    expect(readFileSync(join(cwd, run, "logs/plate-P1@generate.out.log"), "utf8")).toBe(log);
    // Its own report in the run folder, and a new file there, are still written.
    for (const out of [join(run, "report.html"), join(run, "mine.html")])
      expect(gpuplan(["report", id!, "-o", out], { cwd, env: NO_GPU }).exitCode).toBe(0);
    writeFileSync(join(cwd, "plan.json"), records.plan);
    const plan = gpuplan(["report", "plan.json", "-o", "./plan.json"], { cwd, env: NO_GPU });
    expect(plan.exitCode).toBe(2);
    expect(plan.stderr).toContain(
      "gpuplan: error: -o ./plan.json is plan.json, the plan this report reads: writing the report there would destroy it  [conflicting-options]",
    );
    expect(readFileSync(join(cwd, "plan.json"), "utf8")).toBe(records.plan);
  }, 60_000);

  it("says clearly when there is nothing to report on (exit 2) or the file is not a plan (exit 1)", () => {
    const cwd = temp();
    const none = gpuplan(["report"], { cwd, env: NO_GPU });
    expect(hasCrashed(none)).toBe(false);
    expect(none.exitCode).toBe(2);
    expect(none.stderr).toContain("no runs in .gpuplan/runs");
    const unknown = gpuplan(["report", "20990101T000000Z-ffffff"], { cwd, env: NO_GPU });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("no run 20990101T000000Z-ffffff");
    writeFileSync(join(cwd, "x.json"), '{"schema": "gpuplan/plan@1"}');
    const notPlan = gpuplan(["report", "x.json"], { cwd, env: NO_GPU });
    expect(hasCrashed(notPlan)).toBe(false);
    expect(notPlan.exitCode).toBe(1);
    expect(notPlan.stderr).toContain("is not a gpuplan plan");
    // A pipeline file: said in one line, not as thirty schema errors of a plan.
    const pipeline = gpuplan(["report", join(ROOT, "examples/hello-cpu.yaml")], { cwd, env: NO_GPU });
    expect(pipeline.exitCode).toBe(1);
    expect(pipeline.stderr).toContain("hello-cpu.yaml is a pipeline file, not a plan  [invalid-plan]");
    expect(pipeline.stderr).toContain("hint: compile it into a plan first: gpuplan compile");
    expect(pipeline.stderr.match(/\berror\b/g)).toHaveLength(1);
    // A folder that is not a run: no empty "0 steps" page.
    for (const folder of [".", "/etc"]) {
      const notRun = gpuplan(["report", folder, "-o", "x.html"], { cwd, env: NO_GPU });
      expect(notRun.exitCode, folder).toBe(2);
      expect(notRun.stderr).toContain(`${folder} is not a run folder`);
      expect(hasCrashed(notRun)).toBe(false);
    }
    const format = gpuplan(["report", "--format", "pdf"], { cwd, env: NO_GPU });
    expect(format.exitCode).toBe(2);
  });

  it("a copied run folder is reported under the name it was asked for, the journal's other id noted", () => {
    const cwd = temp();
    const runDir = runCpuExample(cwd);
    cpSync(runDir, join(cwd, "copy"), { recursive: true });
    const r = gpuplan(["report", "./copy", "-o", "copy.html"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^gpuplan report: run copy: 9 steps/);
    expect(r.stderr).toContain(`note: journal.jsonl: its header names run ${basename(runDir)}, not copy`);
    expect(readFileSync(join(cwd, "copy.html"), "utf8")).toContain(
      "<title>gpuplan report — run copy</title>",
    );
  }, 30_000);

  it.skipIf(!hasScript)(
    "on a terminal, a link planted at the default output (the run's report.html, a plan's .html) is replaced, its target untouched",
    () => {
      const cwd = temp();
      const runDir = runCpuExample(cwd);
      const victim = join(cwd, "victim");
      writeFileSync(victim, "precious\n");
      symlinkSync(victim, join(runDir, "report.html"));
      const r = onTerminal(["report", basename(runDir)], cwd);
      expect(r.status, r.stdout).toBe(0);
      expect(readFileSync(victim, "utf8")).toBe("precious\n");
      expect(lstatSync(join(runDir, "report.html")).isFile()).toBe(true);
      expect(readFileSync(join(runDir, "report.html"), "utf8")).toMatch(/^<!doctype html>/);

      mkdirSync(join(cwd, "plans"));
      const compiled = gpuplan(
        ["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only", "-o", "plans/p.json"],
        { cwd, env: NO_GPU },
      );
      expect(compiled.exitCode, compiled.stderr).toBe(0);
      symlinkSync("../victim", join(cwd, "plans/p.html"));
      const p = onTerminal(["report", "plans/p.json"], cwd);
      expect(p.status, p.stdout).toBe(0);
      expect(readFileSync(victim, "utf8")).toBe("precious\n");
      expect(lstatSync(join(cwd, "plans/p.html")).isFile()).toBe(true);
      // An explicit -o still follows a link: the user named it.
      symlinkSync(victim, join(cwd, "mine.html"));
      const o = gpuplan(["report", basename(runDir), "-o", "mine.html"], { cwd, env: NO_GPU });
      expect(o.exitCode, o.stderr).toBe(0);
      expect(readFileSync(victim, "utf8")).toMatch(/^<!doctype html>/);
    },
    60_000,
  );

  it.skipIf(!hasScript)(
    "a run named by its path follows a link the user typed; an id whose runs-folder entry is a link is refused, nothing written through it",
    () => {
      const cwd = temp();
      const runDir = runCpuExample(cwd);
      const id = basename(runDir);
      // The run moved elsewhere, a link left in its place in the runs folder.
      const elsewhere = join(temp(), id);
      renameSync(runDir, elsewhere);
      symlinkSync(elsewhere, runDir);
      const written = join(elsewhere, "report.html");

      for (const args of [
        ["report", id],
        ["run", "--resume", id],
        ["status", id],
      ]) {
        const r = gpuplan(args, { cwd, env: NO_GPU });
        expect(hasCrashed(r), r.stderr).toBe(false);
        expect(r.exitCode, args.join(" ")).toBe(2);
        expect(r.stderr).toContain(
          `run ${id} in .gpuplan/runs is a symbolic link, not a run folder  [unknown-run]`,
        );
        expect(r.stderr).toContain(`name it as a path: .gpuplan/runs/${id}`);
      }
      const history = gpuplan(["compile", join(ROOT, "examples/hello-cpu.yaml"), "--history", id], {
        cwd,
        env: NO_GPU,
      });
      expect(history.exitCode).toBe(2);
      expect(history.stderr).toContain("is a symbolic link, not a run folder");
      const byId = onTerminal(["report", id], cwd);
      expect(byId.status, byId.stdout).toBe(2);
      expect(existsSync(written)).toBe(false);
      // Never the newest run either, as gpuplan runs never lists it.
      expect(gpuplan(["report"], { cwd, env: NO_GPU }).stderr).toContain("no runs in .gpuplan/runs");

      // Named as a path, the link is the user's: followed, the page written where it leads.
      const byPath = onTerminal(["report", join(".gpuplan/runs", id)], cwd);
      expect(byPath.status, byPath.stdout).toBe(0);
      expect(readFileSync(written, "utf8")).toMatch(/^<!doctype html>/);
      expect(lstatSync(runDir).isSymbolicLink()).toBe(true);
      rmSync(written);
      symlinkSync(elsewhere, join(cwd, "mine"));
      const mine = onTerminal(["report", "./mine"], cwd);
      expect(mine.status, mine.stdout).toBe(0);
      expect(readFileSync(written, "utf8")).toMatch(/^<!doctype html>/);
    },
    60_000,
  );

  it("is not loaded by --help or compile", () => {
    const bundle = join(fileURLToPath(new URL("../..", import.meta.url)), "dist/bundle");
    const reportCode = (modules: string[]) =>
      modules
        .map((m) => m.replace(/^(esm|cjs) file:\/\//, ""))
        .filter((f) => f.startsWith(bundle))
        .filter((f) => /buildRunReport|report:painted/.test(readFileSync(f, "utf8")));
    for (const args of [
      ["--help"],
      ["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only"],
    ]) {
      const { result, modules } = loadedModules(args, "dist/bundle");
      expect(result.exitCode, result.stderr).toBe(0);
      expect(modules.length).toBeGreaterThan(0);
      expect(reportCode(modules)).toEqual([]);
    }
    // The check finds the report's code where it is.
    const { modules } = loadedModules(
      ["report", "--format", "trace", "20990101T000000Z-ffffff"],
      "dist/bundle",
    );
    expect(reportCode(modules).length).toBeGreaterThan(0);
  });
});

describe("report --format trace on stdout", () => {
  it("keeps a C1 control (U+009B, CSI) of a pipeline's name escaped, and the name", () => {
    const dir = temp();
    writeFileSync(
      join(dir, "c1.yaml"),
      'version: 1\nname: c1\npipelines:\n  - name: "p\\u009b2J"\n    steps: [{ id: a, run: [sh, -c, "true"], memory: numpy }]\n',
    );
    expect(
      gpuplan(["compile", "c1.yaml", "--target", "cpu-only", "-o", "c1.json"], { cwd: dir }).exitCode,
    ).toBe(0);
    const r = gpuplan(["report", "c1.json", "--format", "trace", "-o", "-"], { cwd: dir });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).not.toMatch(/[\u007f-\u009f]/);
    expect(r.stdout).toContain("p\\u009b2J");
    const pipelines = JSON.parse(r.stdout).traceEvents.map(
      (e: { args?: { pipeline?: string } }) => e.args?.pipeline,
    );
    expect(pipelines).toContain("p\u009b2J");
  });
});
