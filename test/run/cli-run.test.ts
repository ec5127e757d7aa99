// `gpuplan run` end to end through the built CLI (`npm run build` first): the runnable example in
// plain and JSON modes, the events file, --dry-run, interrupt and --resume, plan verification
// against fake NVML GPUs, and usage errors.
import { execFileSync, spawn } from "node:child_process";
import {
  chmodSync,
  closeSync,
  constants,
  copyFileSync,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  symlinkSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";
import { FIXTURES } from "./helpers/harness.js";

const EXAMPLE = join(ROOT, "examples/hello-cpu.yaml");
const MISSING = "/nonexistent/gpuplan-test-library.so";
/** No vendor library: live detection sees a CPU-only machine, quickly. */
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
  for (const c of cleanups) c();
  cleanups = [];
});
const temp = () => {
  const t = tempDir();
  cleanups.push(t.cleanup);
  return t.dir;
};
const runIds = (cwd: string) => readdirSync(join(cwd, ".gpuplan/runs")).sort();

describe("gpuplan run (CLI)", () => {
  it("prints the in-memory compile's warnings first, as gpuplan compile does", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "warn.yaml"),
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: a, run: [node, -e, '0'], vram: 1GiB }\n",
    );
    const r = gpuplan(["run", "warn.yaml", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr.split("\n")[0]).toMatch(/^warn\.yaml:5:40 +warning +`vram` has no effect on step `a`/);
  });

  it("runs the CPU example end to end in plain mode: prefixed lines on stderr, logs and journal in the run dir", () => {
    const cwd = temp();
    const r = gpuplan(["run", EXAMPLE, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(hasCrashed(r)).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toMatch(
      /\[plate-P2\/summarize cpu\] plate P2: mean [\d.]+, sd [\d.]+, brightest tile \d+/,
    );
    expect(r.stderr).toMatch(/9 ok, 0 failed, 0 skipped/);
    // A file of CPU steps only has nothing to hear about GPUs (#11.12): the run's own lines come first.
    expect(r.stderr).not.toMatch(/no-gpus/);
    expect(r.stderr.split("\n")[0]).toMatch(/^\[run\] started run /);
    const [id] = runIds(cwd);
    expect(id).toMatch(/^\d{8}T\d{6}Z-[0-9a-f]{6}$/);
    const runDir = join(cwd, ".gpuplan/runs", id!);
    expect(readFileSync(join(runDir, "logs/plate-P1@normalize.out.log"), "utf8")).toMatch(
      /plate P1: normalized 16 tiles/,
    );
    const journal = readFileSync(join(runDir, "journal.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(journal[0]).toMatchObject({
      type: "run",
      run: id,
      pipelines: ["plate-P1", "plate-P2", "plate-P3"],
    });
    expect(journal.filter((e) => e.type === "step" && e.status === "ok")).toHaveLength(9);
    expect(journal.at(-1)).toMatchObject({ type: "end", ok: 9, failed: 0 });
  });

  it("--ui json streams the events on stdout, and --events appends the same lines to a file", () => {
    const cwd = temp();
    const eventsFile = join(cwd, "out/events.jsonl");
    const r = gpuplan(["run", EXAMPLE, "--ui", "json", "--events", eventsFile, "--pipeline", "plate-P1"], {
      cwd,
      env: NO_GPU,
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const lines = r.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0]).toMatchObject({ event: "run.start", pipeline: null, pipelines: ["plate-P1"] });
    expect(lines.at(-1)).toMatchObject({ event: "run.summary", ok: 3, failed: 0 });
    const events = lines.slice(0, -1);
    expect(events.at(-1)).toMatchObject({ event: "run.end", status: "ok" });
    expect(
      events.filter((e) => e.event === "gpu.step.end").map((e) => `${e.step}:${e.status}:${e.exitCode}`),
    ).toEqual(["generate:ok:0", "normalize:ok:0", "summarize:ok:0"]);
    for (const e of events)
      for (const k of ["ts", "event", "run", "pipeline", "step", "device"]) expect(e).toHaveProperty(k);
    const fromFile = readFileSync(eventsFile, "utf8");
    expect(fromFile).toBe(`${events.map((e) => JSON.stringify(e)).join("\n")}\n`);
    const [id] = runIds(cwd);
    expect(readFileSync(join(cwd, ".gpuplan/runs", id!, "events.jsonl"), "utf8")).toBe(fromFile);
  });

  it("--dry-run verifies and shows commands and env, and starts nothing", () => {
    const cwd = temp();
    const r = gpuplan(["run", EXAMPLE, "--dry-run"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("pipeline plate-P3 on cpu");
    expect(r.stdout).toContain("run: node steps/generate-tiles.mjs --plate P3 --tiles 16");
    expect(r.stdout).toContain(`cwd: ${join(ROOT, "examples")}`);
    expect(r.stdout).toMatch(/^ {4}CUDA_VISIBLE_DEVICES=$/m);
    expect(existsSync(join(cwd, ".gpuplan"))).toBe(false);
    const json = gpuplan(["run", EXAMPLE, "--dry-run", "--ui", "json", "--pipeline", "plate-P1"], {
      cwd,
      env: NO_GPU,
    });
    expect(json.exitCode, json.stderr).toBe(0);
    const d = JSON.parse(json.stdout);
    expect(d.pipelines.map((p: { name: string }) => p.name)).toEqual(["plate-P1"]);
    expect(d.pipelines[0].steps.map((s: { id: string }) => s.id)).toEqual([
      "generate",
      "normalize",
      "summarize",
    ]);
    expect(d.pipelines[0].steps[0].env).toMatchObject({
      CUDA_VISIBLE_DEVICES: "",
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      GPUPLAN_PIPELINE: "plate-P1",
    });
  });

  it("--resume refuses a plan file other than the one the run started with (exit 2)", () => {
    const cwd = temp();
    const compiled = gpuplan(["compile", EXAMPLE, "--target", "cpu-only", "-o", "plan.json"], {
      cwd,
      env: NO_GPU,
    });
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    const first = gpuplan(["run", "plan.json", "--ui", "plain", "--pipeline", "plate-P1"], {
      cwd,
      env: NO_GPU,
    });
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = runIds(cwd);
    const plan = JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8"));
    plan.pipelines[0].steps[0].argv.push("--extra");
    writeFileSync(join(cwd, "other.json"), JSON.stringify(plan));
    const r = gpuplan(["run", "other.json", "--resume", id!], { cwd, env: NO_GPU });
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(`run ${id} was started from a different plan than other.json`);
    const again = gpuplan(["run", "plan.json", "--resume", join(".gpuplan/runs", id!), "--ui", "json"], {
      cwd,
      env: NO_GPU,
    });
    expect(again.exitCode, again.stderr).toBe(0);
    const events = again.stdout
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    // Nothing left to do: every step of plate-P1 completed in the first attempt.
    expect(events.filter((e) => e.event === "gpu.step.start")).toEqual([]);
    expect(events.filter((e) => e.event === "gpu.step.skip")).toHaveLength(3);
  });

  it("--resume with the pipeline file of a run started from a plan in another folder: the same plan, resumed", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "p.yaml"),
      'version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: a, run: [sh, -c, "exit 1"], memory: numpy }\n',
    );
    // plans/plan.json records the pipeline as ../p.yaml#/pipelines/0; compiled in memory it is p.yaml#….
    mkdirSync(join(cwd, "plans"));
    const compiled = gpuplan(["compile", "p.yaml", "-o", "plans/plan.json"], { cwd, env: NO_GPU });
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    const first = gpuplan(["run", "plans/plan.json", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(1);
    const [id] = runIds(cwd);
    const resumed = gpuplan(["run", "p.yaml", "--resume", id!, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(resumed.stderr).not.toContain("resume-plan-changed");
    // Resumed: the failed step ran again and failed again.
    expect(resumed.exitCode, resumed.stderr).toBe(1);
  });

  it("--resume with a pipeline file compiles it as run does: the same → resumed; edited → resume-plan-changed (exit 2); missing or invalid → its error, never ignored", () => {
    const cwd = temp();
    const pipeline = (v: string, exit: number) =>
      `version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: a, run: [sh, -c, "echo ${v}; exit ${exit}"], memory: numpy }\n`;
    writeFileSync(join(cwd, "p.yaml"), pipeline("v1", 1));
    const first = gpuplan(["run", "p.yaml", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(1);
    const [id] = runIds(cwd);
    writeFileSync(join(cwd, "p.yaml"), pipeline("v2", 0));
    const edited = gpuplan(["run", "p.yaml", "--resume", id!, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(edited.exitCode, edited.stderr).toBe(2);
    expect(edited.stderr).toContain(`run ${id} was started from a different plan than p.yaml compiles to`);
    expect(edited.stderr).toContain("resume-plan-changed");
    expect(edited.stdout + edited.stderr).not.toContain("v1");
    const missing = gpuplan(["run", "/nonexistent/x.json", "--resume", id!], { cwd, env: NO_GPU });
    expect(hasCrashed(missing)).toBe(false);
    expect(missing.exitCode).toBe(2);
    expect(missing.stderr).toContain("/nonexistent/x.json");
    writeFileSync(join(cwd, "junk.json"), "{ not json");
    const junk = gpuplan(["run", "junk.json", "--resume", id!], { cwd, env: NO_GPU });
    expect(hasCrashed(junk)).toBe(false);
    expect(junk.exitCode).not.toBe(0);
    expect(junk.stderr).toContain("junk.json:1:");
    writeFileSync(join(cwd, "bad.yaml"), "version: 1\npipelines: 3\n");
    const invalid = gpuplan(["run", "bad.yaml", "--resume", id!], { cwd, env: NO_GPU });
    expect(invalid.exitCode).toBe(1);
    expect(invalid.stderr).toContain("bad.yaml:2:");
    // The pipeline as the run started with it: the failed step runs again, its own command.
    writeFileSync(join(cwd, "p.yaml"), pipeline("v1", 1));
    const same = gpuplan(["run", "p.yaml", "--resume", id!, "--ui", "plain"], { cwd, env: NO_GPU });
    expect(same.exitCode, same.stderr).toBe(1);
    expect(same.stderr).not.toContain("resume-plan-changed");
    expect(readFileSync(join(cwd, ".gpuplan/runs", id!, "plan.json"), "utf8")).toContain("echo v1");
  });

  it("--resume --pipeline names only pipelines the run was started with; each session's end says which it ran", () => {
    const cwd = temp();
    const first = gpuplan(["run", EXAMPLE, "--ui", "plain", "--pipeline", "plate-P1"], { cwd, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = runIds(cwd);
    const journal = join(cwd, ".gpuplan/runs", id!, "journal.jsonl");
    const ends = () =>
      readFileSync(journal, "utf8")
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l))
        .filter((e) => e.type === "end");
    expect(ends().map((e) => e.pipelines)).toEqual([["plate-P1"]]);
    const other = gpuplan(["run", "--resume", id!, "--pipeline", "plate-P2"], { cwd, env: NO_GPU });
    expect(hasCrashed(other)).toBe(false);
    expect(other.exitCode).toBe(2);
    expect(other.stderr).toContain(`--pipeline: run ${id} was started without \`plate-P2\``);
    expect(other.stderr).toContain("unknown-pipeline");
    expect(ends()).toHaveLength(1);
    const own = gpuplan(["run", "--resume", id!, "--pipeline", "plate-P1", "--ui", "plain"], {
      cwd,
      env: NO_GPU,
    });
    expect(own.exitCode, own.stderr).toBe(0);
  });

  it("--resume of a run whose kept plan.json was damaged reports it as a plan problem (exit 1), not a crash", () => {
    const cwd = temp();
    const first = gpuplan(["run", EXAMPLE, "--ui", "plain", "--pipeline", "plate-P1"], { cwd, env: NO_GPU });
    expect(first.exitCode, first.stderr).toBe(0);
    const [id] = runIds(cwd);
    const kept = join(cwd, ".gpuplan/runs", id!, "plan.json");
    writeFileSync(kept, readFileSync(kept, "utf8").slice(0, 200));
    // The journal recorded plan.json's digest: a torn one is a changed plan, refused as such.
    const changed = gpuplan(["run", EXAMPLE, "--resume", id!], { cwd, env: NO_GPU });
    expect(hasCrashed(changed)).toBe(false);
    expect(changed.exitCode, changed.stderr).toBe(2);
    expect(changed.stderr).toContain("[resume-plan-changed]");
    // A folder from before the digest: the torn plan is read, and is a plan problem.
    const journal = join(cwd, ".gpuplan/runs", id!, "journal.jsonl");
    writeFileSync(journal, readFileSync(journal, "utf8").replace(/,"planSha256":"[0-9a-f]{64}"/, ""));
    const torn = gpuplan(["run", EXAMPLE, "--resume", id!], { cwd, env: NO_GPU });
    expect(hasCrashed(torn)).toBe(false);
    expect(torn.exitCode, torn.stderr).toBe(1);
    expect(torn.stderr).toContain("plan.json");
    writeFileSync(kept, JSON.stringify({ schema: "gpuplan/plan@1", pipelines: [] }));
    const wrong = gpuplan(["run", EXAMPLE, "--resume", id!], { cwd, env: NO_GPU });
    expect(hasCrashed(wrong)).toBe(false);
    expect(wrong.exitCode).toBe(1);
    expect(wrong.stderr).toContain("is not a gpuplan plan");
  });

  it("SIGINT stops the run (exit 130) and --resume runs only the steps that did not complete", async () => {
    const cwd = temp();
    for (const f of ["slow-steps.yaml", "record.mjs"]) copyFileSync(join(FIXTURES, f), join(cwd, f));
    const record = join(cwd, "record.jsonl");
    const env = { ...process.env, ...NO_GPU, NO_COLOR: "1", RECORD_FILE: record };
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "slow-steps.yaml", "--ui", "plain"],
      {
        cwd,
        env,
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const names = () => (existsSync(record) ? readFileSync(record, "utf8") : "");
    const deadline = Date.now() + 15_000;
    while (!(names().includes('"a-two"') && names().includes('"b-two"')) && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
    }
    child.kill("SIGINT");
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    expect(code, stderr).toBe(130);
    const [id] = runIds(cwd);
    // The interrupted run's events are run events too (schemas/run-events.schema.json).
    const { default: validateRunEvent } = await import("../../src/generated/run-events-validator.js");
    const interrupted = readFileSync(join(cwd, ".gpuplan/runs", id!, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    for (const e of interrupted) expect(validateRunEvent(e), JSON.stringify(e)).toBe(true);
    expect(interrupted.at(-1)).toMatchObject({ event: "run.end", status: "interrupted" });
    const before = names();
    expect(before).not.toContain('"a-three"');

    const r = gpuplan(["run", "slow-steps.yaml", "--resume", id!, "--ui", "plain"], {
      cwd,
      env: { ...NO_GPU, RECORD_FILE: record },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const entered = readFileSync(record, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.what === "enter")
      .map((e) => e.name);
    const count = (n: string) => entered.filter((e) => e === n).length;
    // One finished before the interrupt: never again. Two was interrupted: run again. Three: once.
    expect([count("a-one"), count("a-two"), count("a-three")]).toEqual([1, 2, 1]);
    expect([count("b-one"), count("b-two"), count("b-three")]).toEqual([1, 2, 1]);
    expect(runIds(cwd)).toEqual([id]);
    expect(r.stderr).toMatch(/completed in an earlier run|6 ok/);
  }, 40_000);

  it("a variable named __proto__ reaches the step, from the pipeline's env and the step's, through a plan file", () => {
    const cwd = temp();
    writeFileSync(
      join(cwd, "proto.yaml"),
      [
        "version: 1",
        "pipelines:",
        "  - name: p",
        "    env: { __proto__: from-pipeline }",
        "    steps:",
        "      - { id: a, run: [printenv, __proto__] }",
        "      - { id: b, run: [printenv, __proto__], env: { __proto__: from-step } }",
        "",
      ].join("\n"),
    );
    const compiled = gpuplan(["compile", "proto.yaml", "--target", "cpu-only", "-o", "plan.json"], {
      cwd,
      env: NO_GPU,
    });
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8"));
    expect(plan.pipelines[0].steps.map((s: { env: object }) => JSON.stringify(s.env))).toEqual([
      '{"__proto__":"from-pipeline"}',
      '{"__proto__":"from-step"}',
    ]);
    const r = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd, env: NO_GPU });
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toContain("[p/a cpu] from-pipeline");
    expect(r.stderr).toContain("[p/b cpu] from-step");
  });

  it("an --events FIFO nobody reads never holds the run: SIGINT still stops it (exit 130), the lost events said", async () => {
    const cwd = temp();
    const fifo = join(cwd, "events.fifo");
    execFileSync("mkfifo", [fifo]);
    // This test holds the FIFO open for reading and fills it (64 KiB), reading nothing: a blocking
    // write of gpuplan's waited here for good, and SIGINT with it.
    const held = openSync(fifo, constants.O_RDWR | constants.O_NONBLOCK);
    cleanups.push(() => closeSync(held));
    try {
      for (;;) writeSync(held, Buffer.alloc(4096, 0x0a));
    } catch (e) {
      if ((e as NodeJS.ErrnoException).code !== "EAGAIN") throw e;
    }
    writeFileSync(
      join(cwd, "p.yaml"),
      "version: 1\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: p\n    steps:\n" +
        "      - { id: s, run: [sh, -c, 'touch started; exec sleep 30'], memory: numpy }\n",
    );
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "p.yaml", "--ui", "plain", "--events", fifo],
      { cwd, env: { ...process.env, ...NO_GPU, NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] },
    );
    cleanups.push(() => child.kill("SIGKILL"));
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
    });
    const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    const deadline = Date.now() + 10_000;
    while (!existsSync(join(cwd, "started")) && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 50));
    child.kill("SIGINT");
    const code = await Promise.race([
      exited,
      new Promise<string>((r) => setTimeout(() => r("still running"), 10_000)),
    ]);
    expect(code, stderr).toBe(130);
    expect(stderr).toContain(`gpuplan: warning: cannot write ${fifo}`);
    expect(stderr).toMatch(/records-incomplete/);
  }, 40_000);

  it("an --events FIFO whose reader is slow: the run waits for it at the end, exit 0, every event delivered", async () => {
    const cwd = temp();
    const fifo = join(cwd, "events.fifo");
    execFileSync("mkfifo", [fifo]);
    // ~120 steps: over 64 KiB of events, more than the FIFO holds, so the reader must read for the
    // run to deliver them all. It opens the FIFO at once, and reads only 4 s after the run is over:
    // gpuplan gave it a second, then dropped the rest and exited 2.
    const steps = Array.from(
      { length: 120 },
      (_, i) => `      - { id: s${i}, run: ["true"], memory: numpy }`,
    );
    writeFileSync(
      join(cwd, "p.yaml"),
      `version: 1\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: p\n    steps:\n${steps.join("\n")}\n`,
    );
    const read = join(cwd, "read.jsonl");
    const reader = spawn(
      "sh",
      [
        "-c",
        'exec < "$1"; while [ ! -e "$2" ]; do sleep 0.1; done; sleep 4; exec cat > "$3"',
        "sh",
        fifo,
        join(cwd, "done"),
        read,
      ],
      { stdio: "ignore" },
    );
    cleanups.push(() => reader.kill("SIGKILL"));
    const readerDone = new Promise<void>((r) => reader.on("close", () => r()));
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "p.yaml", "--ui", "plain", "--events", fifo],
      { cwd, env: { ...process.env, ...NO_GPU, NO_COLOR: "1" }, stdio: ["ignore", "ignore", "pipe"] },
    );
    cleanups.push(() => child.kill("SIGKILL"));
    let stderr = "";
    child.stderr.on("data", (d) => {
      stderr += String(d);
      // The steps are done: the reader starts its 4 s of sleep.
      if (/done: \d+ ok/.test(stderr) && !existsSync(join(cwd, "done"))) writeFileSync(join(cwd, "done"), "");
    });
    const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
    await readerDone;
    expect(code, stderr).toBe(0);
    expect(stderr).not.toMatch(/records-incomplete/);
    expect(stderr).toContain(`waiting for the reader of ${fifo}`);
    const runs = readdirSync(join(cwd, ".gpuplan", "runs"));
    expect(readFileSync(read, "utf8")).toBe(
      readFileSync(join(cwd, ".gpuplan", "runs", runs[0]!, "events.jsonl"), "utf8"),
    );
    expect(readFileSync(read, "utf8").length).toBeGreaterThan(64 * 1024);
  }, 60_000);

  /** Runs gpuplan with the given stdio (Node's "pipe" is a socket pair); resolves with its exit and what came out. */
  const runWithSockets = (cwd: string, args: string[], stdio: ("ignore" | "pipe")[], pauseMs = 0) =>
    new Promise<{ code: number | null; out: string; fd3: string; stderr: string }>((resolve) => {
      const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), ...args], {
        cwd,
        env: { ...process.env, ...NO_GPU, NO_COLOR: "1" },
        stdio,
      });
      cleanups.push(() => child.kill("SIGKILL"));
      const got = { out: "", fd3: "", stderr: "" };
      child.stdout?.on("data", (d) => (got.out += String(d)));
      child.stdio[3]?.on("data", (d) => (got.fd3 += String(d)));
      child.stderr?.on("data", (d) => (got.stderr += String(d)));
      // A reader that falls behind: it reads nothing for a while.
      if (pauseMs > 0) {
        child.stdout?.pause();
        setTimeout(() => child.stdout?.resume(), pauseMs);
      }
      child.on("close", (code) => resolve({ code, ...got }));
    });
  /** `n` steps of `true`, CPU only. */
  const writeTruePlan = (cwd: string, n: number) => {
    const steps = Array.from({ length: n }, (_, i) => `      - { id: s${i}, run: ["true"], memory: numpy }`);
    writeFileSync(
      join(cwd, "p.yaml"),
      `version: 1\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: p\n    steps:\n${steps.join("\n")}\n`,
    );
  };
  const ownEvents = (cwd: string) =>
    readFileSync(join(cwd, ".gpuplan/runs", runIds(cwd)[0]!, "events.jsonl"), "utf8");

  it("--events /dev/stdout, /proc/self/fd/1 and /dev/fd/3 reach a socket (a Node parent's pipes, systemd): every event, exit 0", async () => {
    for (const [path, stdio] of [
      ["/dev/stdout", ["ignore", "pipe", "pipe"]],
      ["/proc/self/fd/1", ["ignore", "pipe", "pipe"]],
      ["/dev/fd/3", ["ignore", "ignore", "pipe", "pipe"]],
    ] as const) {
      const cwd = temp();
      writeTruePlan(cwd, 3);
      const r = await runWithSockets(cwd, ["run", "p.yaml", "--ui", "plain", "--events", path], [...stdio]);
      // Opening the socket's /proc link said ENXIO, read as a FIFO nobody reads: nothing, exit 2.
      expect(r.code, `${path}: ${r.stderr}`).toBe(0);
      expect(r.stderr).not.toMatch(/records-incomplete/);
      expect(path === "/dev/fd/3" ? r.fd3 : r.out).toBe(ownEvents(cwd));
    }
  }, 60_000);

  it("--events naming a UNIX socket by its path, or a descriptor gpuplan was not given, is a usage error before the run (no crash)", async () => {
    const cwd = temp();
    writeTruePlan(cwd, 1);
    const sock = join(cwd, "s.sock");
    const server = (await import("node:net")).createServer();
    await new Promise<void>((r) => server.listen(sock, r));
    cleanups.push(() => server.close());
    const r = await runWithSockets(cwd, ["run", "p.yaml", "--events", sock], ["ignore", "pipe", "pipe"]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/s\.sock: it is a UNIX socket.*\[unwritable-file\]/);
    expect(existsSync(join(cwd, ".gpuplan"))).toBe(false);
    // Descriptors 3–12 are the event loop's own pipes and eventfds here, or not open: writing
    // events into its wakeup pipe crashed gpuplan (SIGSEGV).
    for (let fd = 3; fd <= 12; fd++) {
      const e = gpuplan(["run", "p.yaml", "--events", `/dev/fd/${fd}`], { cwd, env: NO_GPU });
      expect(hasCrashed(e), `${fd}: ${e.stderr}`).toBe(false);
      expect(e.exitCode, `${fd}: ${e.stderr}`).toBe(2);
      expect(e.stderr).toContain(`without descriptor ${fd} open  [unwritable-file]`);
    }
  }, 60_000);

  it("--events /dev/stdout beside --ui json is refused: the view writes the events there already (twice, and lines could interleave)", () => {
    const cwd = temp();
    writeTruePlan(cwd, 2);
    for (const path of ["/dev/stdout", "/dev/fd/1", "/proc/self/fd/1"]) {
      const r = gpuplan(["run", "p.yaml", "--ui", "json", "--events", path], { cwd, env: NO_GPU });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`--events ${path} with --ui json`);
      expect(r.stderr).toContain("[conflicting-options]");
    }
    expect(existsSync(join(cwd, ".gpuplan"))).toBe(false);
  });

  it("--ui json to a socket that falls behind: the lines are the run's events.jsonl byte for byte, then the summary; exit 0", async () => {
    const cwd = temp();
    writeTruePlan(cwd, 120);
    const r = await runWithSockets(cwd, ["run", "p.yaml", "--ui", "json"], ["ignore", "pipe", "pipe"], 2000);
    expect(r.code, r.stderr).toBe(0);
    const own = ownEvents(cwd);
    expect(r.out.startsWith(own)).toBe(true);
    const rest = r.out.slice(own.length).split("\n");
    expect(rest).toHaveLength(2);
    expect(JSON.parse(rest[0]!)).toMatchObject({ event: "run.summary", ok: 120 });
  }, 60_000);

  it("--events naming the plan or pipeline file it runs is refused, the file untouched (exit 2)", () => {
    const cwd = temp();
    copyFileSync(EXAMPLE, join(cwd, "p.yaml"));
    for (const input of ["p.yaml", "./p.yaml"]) {
      const before = readFileSync(join(cwd, "p.yaml"), "utf8");
      const r = gpuplan(["run", input, "--events", "p.yaml", "--dry-run"], { cwd, env: NO_GPU });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain("the file this run reads: appending events there would destroy it");
      expect(readFileSync(join(cwd, "p.yaml"), "utf8")).toBe(before);
    }
  });

  it("usage errors: an unknown pipeline (exit 2, did you mean), a bad --lock-timeout (exit 2), not a plan (exit 1)", () => {
    const cwd = temp();
    const unknown = gpuplan(["run", EXAMPLE, "--pipeline", "plate-P4"], { cwd, env: NO_GPU });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toMatch(/no pipeline `plate-P4`[\s\S]*did you mean `plate-P1`/);
    const timeout = gpuplan(["run", EXAMPLE, "--lock-timeout", "soon"], { cwd, env: NO_GPU });
    expect(timeout.exitCode).toBe(2);
    writeFileSync(join(cwd, "bad.json"), JSON.stringify({ schema: "gpuplan/plan@1", pipelines: [] }));
    const bad = gpuplan(["run", "bad.json"], { cwd, env: NO_GPU });
    expect(bad.exitCode).toBe(1);
    expect(bad.stderr).toContain("is not a gpuplan plan");
    expect(hasCrashed(bad)).toBe(false);
  });
});

describe.skipIf(!fakeLibsBuilt)("gpuplan run on fake NVML GPUs (CLI)", () => {
  const PIPELINE = `
version: 1
name: gpu-run
registry: { max_pipelines_per_gpu: 2 }
pipelines:
  - name: seg-{n}
    matrix: { n: [1, 2, 3] }
    steps:
      - id: segment
        run: [node, record.mjs, "seg-{n}", "50"]
        memory: torch
        vram: 20GiB
`;
  const setup = () => {
    const cwd = temp();
    copyFileSync(join(FIXTURES, "record.mjs"), join(cwd, "record.mjs"));
    writeFileSync(join(cwd, "gpu.yaml"), PIPELINE);
    const scenario = join(cwd, "machine.scenario");
    copyFileSync(join(SCENARIOS, "h100x8-mig.scenario"), scenario);
    const env = (extra: Record<string, string> = {}) => ({
      ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }, { GPUPLAN_FAKE_SCENARIO: scenario }),
      GPUPLAN_LOCK_DIR: join(cwd, "locks"),
      RECORD_FILE: join(cwd, "record.jsonl"),
      CI: "1",
      ...extra,
    });
    mkdirSync(join(cwd, "locks"));
    const compiled = gpuplan(["compile", "gpu.yaml", "-o", "plan.json"], { cwd, env: env() });
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    return { cwd, scenario, env, plan: JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8")) };
  };

  it("runs a GPU plan: each step sees only its GPU, by UUID, in PCI order", () => {
    const { cwd, env, plan } = setup();
    const r = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd, env: env() });
    expect(r.exitCode, r.stderr).toBe(0);
    const entered = readFileSync(join(cwd, "record.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l))
      .filter((e) => e.what === "enter");
    expect(entered).toHaveLength(3);
    const uuidOf = new Map<string, string>(
      plan.registry.map((g: { gpu: string; uuid: string }) => [g.gpu, g.uuid]),
    );
    for (const e of entered) expect(e.cuda).toBe(uuidOf.get(e.device));
    // Memory snapshots from (fake) NVML through detection, for the step's own GPU.
    const [id] = runIds(cwd);
    const events = readFileSync(join(cwd, ".gpuplan/runs", id!, "events.jsonl"), "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    const snapshots = events.filter((e) => e.event === "gpu.memory.snapshot");
    expect(snapshots.length).toBeGreaterThan(0);
    for (const snap of snapshots) {
      expect(snap.gpus).toEqual([
        expect.objectContaining({
          gpu: snap.device,
          uuid: uuidOf.get(snap.device),
          totalBytes: expect.any(Number),
        }),
      ]);
      expect(snap.gpus[0].usedBytes + snap.gpus[0].freeBytes).toBe(snap.gpus[0].totalBytes);
    }
  });

  it("with --bind exact, refuses to run when a planned GPU is gone, saying what changed and how to recompile (exit 1)", () => {
    const { cwd, scenario, env, plan } = setup();
    const gpu = plan.pipelines[0].gpu as string;
    const uuid = plan.registry.find((g: { gpu: string }) => g.gpu === gpu).uuid as string;
    const text = readFileSync(scenario, "utf8");
    writeFileSync(scenario, text.replace(uuid, "GPU-00000000-0000-0000-0000-00000000beef"));
    const r = gpuplan(["run", "plan.json", "--ui", "plain", "--bind", "exact"], { cwd, env: env() });
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain(
      `${gpu} (NVIDIA H100 80GB HBM3, ${uuid}) from the plan is not visible on this machine, and --bind exact takes no replacement`,
    );
    // Planning for this machine never overwrites the plan made for another (9c95491).
    expect(r.stderr).toContain("leaves the plan as it is: gpuplan run gpu.yaml");
    expect(existsSync(join(cwd, "record.jsonl"))).toBe(false);
  });

  it.each([
    ["world-writable", (locks: string) => chmodSync(locks, 0o777)],
    [
      "a GPU's lock file a link",
      (locks: string, uuid: string) => symlinkSync("/dev/null", join(locks, `${uuid}.gpu.lock`)),
    ],
  ])(
    "a lock directory it must not use (%s) stops the run before its first step: exit 2, no run folder, no summary",
    (_, spoil) => {
      const { cwd, env, plan } = setup();
      // A CPU pipeline first: it used to run, then the GPU's first slot found the directory bad.
      writeFileSync(
        join(cwd, "mixed.yaml"),
        `${PIPELINE}  - name: cpu-first\n    steps:\n      - { id: s, run: [node, record.mjs, cpu-first, "10"] }\n`,
      );
      expect(gpuplan(["compile", "mixed.yaml", "-o", "mixed.json"], { cwd, env: env() }).exitCode).toBe(0);
      spoil(join(cwd, "locks"), plan.registry[0].uuid as string);
      const r = gpuplan(["run", "mixed.json", "--ui", "plain"], { cwd, env: env() });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toMatch(/\[lock-(dir|file)-untrusted\]|\[lock-/);
      expect(r.stderr).not.toMatch(/\bdone: /);
      expect(existsSync(join(cwd, "record.jsonl"))).toBe(false);
      expect(existsSync(join(cwd, ".gpuplan/runs")) ? readdirSync(join(cwd, ".gpuplan/runs")) : []).toEqual(
        [],
      );
    },
  );
});
