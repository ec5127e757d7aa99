// `gpuplan compile FILE --history RUN… | auto` through the built CLI: which runs it learned from
// (said on stderr), runs of another pipeline file left out with a note, --strict, and damaged or
// foreign folders as located problems, never a stack.
import {
  appendFileSync,
  existsSync,
  mkdirSync,
  readFileSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { targetInventory } from "../../src/inventory/load-inventory.js";
import type { GpuplanPlan } from "../../src/schema-types/plan.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";
import { end, events, runEnd, runStart, start } from "../report/helpers/events.js";
import { NO_GPU, runCpuExample } from "../report/helpers/runs.js";
import { planFor, writeRun } from "./helpers.js";

const PIPELINE = `version: 1
name: tiles
pipelines:
  - name: plate-{p}
    matrix: { p: [1, 2] }
    steps:
      - id: count
        run: [node, -e, "0"]
        memory: numpy
        estimate: 1s
`;
const OTHER = PIPELINE.replace("name: tiles", "name: other");
const MINE = "20261123T100000Z-aaaaaa";
const THEIRS = "20261124T100000Z-cccccc";
const TARGET = ["--target", "2x-rtx3090"];

const cleanups: (() => void)[] = [];
afterAll(() => {
  for (const c of cleanups) c();
});

/** A folder with p.yaml, other.yaml, and one run of each in .gpuplan/runs (p.yaml's steps took 5 s). */
async function setUp() {
  const t = tempDir();
  cleanups.push(t.cleanup);
  const runs = join(t.dir, ".gpuplan/runs");
  const write = async (name: string, text: string, id: string, ms: number) => {
    const file = join(t.dir, name);
    writeFileSync(file, text);
    const plan = await planFor(file, {
      inventory: targetInventory("2x-rtx3090").inventory!,
      label: "t",
      problems: [],
    });
    writeRun(
      runs,
      id,
      plan,
      file,
      events([
        [0, runStart(["plate-1", "plate-2"])],
        [1, start("plate-1", "count", "cpu")],
        [2, end("plate-1", "count", "cpu", ms)],
        [3, start("plate-2", "count", "cpu")],
        [4, end("plate-2", "count", "cpu", ms + 200)],
        [5, runEnd(ms + 300, "ok", 2)],
      ]),
    );
  };
  await write("p.yaml", PIPELINE, MINE, 5000);
  await write("other.yaml", OTHER, THEIRS, 100);
  return { dir: t.dir, runs };
}

const compile = (cwd: string, ...args: string[]) =>
  gpuplan(["compile", "p.yaml", ...TARGET, ...args], { cwd, env: NO_GPU });

describe("gpuplan compile --history", () => {
  it("auto: learns from this file's runs, says which, leaves other files' runs out with a note", async () => {
    const { dir } = await setUp();
    const r = compile(dir, "--history", "auto", "-o", "plan.json");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain("history: left out 1 run(s) of other pipeline files in .gpuplan/runs");
    expect(r.stderr).toContain(
      `history: learned 1 step from 1 run (auto: the newest of this pipeline file): ${MINE}`,
    );
    // The warning is located at the estimate in p.yaml.
    expect(r.stderr).toMatch(/p\.yaml:10:19\s+warning\s+step `count` of `plate-\{p\}` took 5\.1s/);
    expect(r.stderr).toContain("[history-estimate-off]");
    const plan = JSON.parse(readFileSync(join(dir, "plan.json"), "utf8")) as GpuplanPlan;
    expect(plan.pipelines[0]!.steps[0]).toMatchObject({
      estimateMs: 5100,
      learned: { estimateMs: { fromFile: 1000, samples: 2, runs: [MINE] } },
    });
  });

  it("a run started through a linked folder (run /link/p.yaml) is a run of p.yaml, and the other way round", async () => {
    const { dir, runs } = await setUp();
    symlinkSync(dir, join(dir, "linked"));
    // The journal keeps the folder the pipeline was named in, as typed.
    const journal = join(runs, MINE, "journal.jsonl");
    const header = JSON.parse(readFileSync(journal, "utf8")) as { baseDir: string };
    writeFileSync(journal, `${JSON.stringify({ ...header, baseDir: join(dir, "linked") })}\n`);
    const r = compile(dir, "--history", "auto", "-o", "plan.json");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `history: learned 1 step from 1 run (auto: the newest of this pipeline file): ${MINE}`,
    );
    // A run started from the real folder, learned from by a compile named through the link.
    writeFileSync(journal, `${JSON.stringify(header)}\n`);
    const linked = gpuplan(["compile", join(dir, "linked/p.yaml"), ...TARGET, "--history", MINE], {
      cwd: dir,
      env: NO_GPU,
    });
    expect(linked.exitCode, linked.stderr).toBe(0);
    expect(linked.stderr).toContain(`learned 1 step from 1 run: ${MINE}`);
  });

  it("--strict makes the warnings errors: exit 1, no plan written", async () => {
    const { dir } = await setUp();
    const r = compile(dir, "--history", MINE, "--strict", "-o", "plan.json");
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/p\.yaml:10:19\s+error\s+step `count`/);
    expect(existsSync(join(dir, "plan.json"))).toBe(false);
    // Without the runs there is nothing to warn about.
    expect(compile(dir, "--strict").exitCode).toBe(0);
  });

  it("a named run of another pipeline file is left out with a note", async () => {
    const { dir } = await setUp();
    const r = compile(dir, "--history", MINE, THEIRS, "--format", "json");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `history: left out run ${THEIRS}: it ran ${join(dir, "other.yaml")}, not p.yaml`,
    );
    expect(r.stderr).toContain(`learned 1 step from 1 run: ${MINE}`);
    const report = JSON.parse(r.stdout) as { problems: { code: string }[] };
    expect(report.problems.map((p) => p.code)).toEqual(["history-estimate-off"]);
  });

  it("a folder that is not a run, a run without its plan: located errors, exit 1, never a stack", async () => {
    const { dir, runs } = await setUp();
    mkdirSync(join(dir, "junk"));
    writeFileSync(join(dir, "junk", "notes.txt"), "hello");
    const junk = compile(dir, "--history", "./junk");
    expect(junk.exitCode, junk.stderr).toBe(1);
    expect(junk.stderr).toContain("./junk is not a gpuplan run folder");
    expect(junk.stderr).toContain("[history-unreadable-run]");
    expect(hasCrashed(junk)).toBe(false);

    rmSync(join(runs, MINE, "plan.json"));
    const planless = compile(dir, "--history", MINE);
    expect(planless.exitCode, planless.stderr).toBe(1);
    expect(planless.stderr).toContain(
      `${join(".gpuplan/runs", MINE, "plan.json")}  error  run ${MINE} cannot be learned from: plan.json: missing`,
    );
    expect(hasCrashed(planless)).toBe(false);
    // auto leaves it out with a note instead.
    const auto = compile(dir, "--history", "auto");
    expect(auto.exitCode, auto.stderr).toBe(0);
    expect(auto.stderr).toContain(`history: left out run ${MINE}: plan.json: missing`);
    expect(auto.stderr).toContain(
      "history: no runs to learn from (no run of this pipeline file in the runs folder)",
    );

    const unknown = compile(dir, "--history", "20990101T000000Z-ffffff");
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("no run 20990101T000000Z-ffffff");
    expect(hasCrashed(unknown)).toBe(false);
  });

  it("a torn line in events.jsonl: a warning at its line, learned from the rest", async () => {
    const { dir, runs } = await setUp();
    appendFileSync(join(runs, MINE, "events.jsonl"), '{"ts": "2026-11-23T10:00:00.010Z", "event": "gpu.st');
    const r = compile(dir, "--history", MINE, "-o", "plan.json");
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      new RegExp(
        `${join(".gpuplan/runs", MINE, "events.jsonl")}:7:1\\s+warning\\s+run ${MINE}: events.jsonl: 1 line\\(s\\) are not run events`,
      ),
    );
    expect(r.stderr).toContain("[history-damaged-run]");
    expect(r.stderr).toContain("learned 1 step from 1 run");
  });

  it("learns from a real run of the CPU example (the run found by auto)", () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const runDir = runCpuExample(t.dir);
    const id = runDir.split("/").at(-1)!;
    const example = join(ROOT, "examples/hello-cpu.yaml");
    const r = gpuplan(["compile", example, "--history", "auto", "-o", "learned.json"], {
      cwd: t.dir,
      env: NO_GPU,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain(
      `history: learned 3 steps from 1 run (auto: the newest of this pipeline file): ${id}`,
    );
    const plan = JSON.parse(readFileSync(join(t.dir, "learned.json"), "utf8")) as GpuplanPlan;
    const events = readFileSync(join(runDir, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l) as { event: string; step?: string; durationMs?: number; status?: string });
    for (const step of plan.pipelines[0]!.steps) {
      const measured = events
        .filter((e) => e.event === "gpu.step.end" && e.step === step.id && e.status === "ok")
        .map((e) => e.durationMs!)
        .sort((a, b) => a - b);
      expect(step.learned?.estimateMs).toEqual({ fromFile: 1000, samples: 3, runs: [id] });
      expect(step.estimateMs).toBe(measured[1]);
    }
  });
});
