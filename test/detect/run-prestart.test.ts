// The probe child bin/gpuplan.js starts for `gpuplan run` (src/detect/run-prestart.ts): only for
// a local run that will check a plan with GPUs against this machine, and then the very child
// that check uses — not a second one.
import { execFileSync, spawn } from "node:child_process";
import { existsSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { detectInventory } from "../../src/detect/index.js";
import { prestartVerificationProbes } from "../../src/detect/prestart.js";
import { claimPrestarted, claimServing } from "../../src/detect/prestarted.js";
import { memoryTasks, planVendorProbes, servingTasks } from "../../src/detect/probe-plan.js";
import { prestartRunProbes, runDetectsGpus, runPlanFile } from "../../src/detect/run-prestart.js";
import { childKey } from "../../src/detect/spawn-child.js";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, scenarioWith } from "./fake-libs.js";

let t: ReturnType<typeof tempDir>;
const write = (name: string, text: string) => writeFileSync(join(t.dir, name), text);
beforeEach(() => {
  t = tempDir();
});
afterEach(() => {
  for (const child of claimPrestarted().values()) child.kill();
  t.cleanup();
});

describe("which run command lines name a file to check against this machine", () => {
  it("a local run, dry or not, with the flags that do not change where it runs", () => {
    expect(runPlanFile(["run", "p.json"])).toBe("p.json");
    expect(runPlanFile(["run", "--ui", "plain", "p.json", "--no-wait"])).toBe("p.json");
    expect(runPlanFile(["run", "--dry-run", "--json", "--lock-dir=/l", "--pipeline", "a", "p.json"])).toBe(
      "p.json",
    );
    expect(
      runPlanFile(["run", "--lock-timeout", "10m", "--kill-grace=2s", "--bind", "exact", "p.json"]),
    ).toBe("p.json");
    expect(runPlanFile(["run", "--executor", "local", "p.yaml"])).toBe("p.yaml");
    expect(runPlanFile(["run", "--", "-odd-name.json"])).toBe("-odd-name.json");
  });

  it("nothing for Slurm, a resume, help, an unknown flag, no file or two", () => {
    for (const args of [
      ["compile", "p.yaml"],
      ["run"],
      ["run", "a.json", "b.json"],
      ["run", "--executor", "slurm", "p.json"],
      ["run", "--executor=slurm", "p.json"],
      ["run", "--resume", "r1"],
      ["run", "--bind-slurm-gpus", "--slurm-task", "1_2", "p.json"],
      ["run", "--help", "p.json"],
      ["run", "-h"],
      ["run", "--uii", "plain", "p.json"],
      ["run", "--json=yes", "p.json"],
      // What the CLI would refuse as a usage error must not load a vendor library, even in a child.
      ["run", "--ui", "bogus", "p.json"],
      ["run", "--ui=plain", "--json", "p.json"],
      ["run", "--bind", "loose", "p.json"],
      ["run", "--cpu-pinning", "maybe", "p.json"],
      ["run", "--spawn=fork", "p.json"],
      ["run", "--lock-timeout", "soon", "p.json"],
      ["run", "--kill-grace", "99d", "p.json"],
      ["run", "--pipeline", "--dry-run", "p.json"],
      ["run", "p.json", "--ui"],
      ["run", "--events", "e.jsonl", "p.json"],
    ])
      expect(runPlanFile(args, {}), args.join(" ")).toBeNull();
  });

  it("nothing when a setting commander reads for run would be refused", () => {
    expect(runPlanFile(["run", "p.json"], { GPUPLAN_KILL_GRACE: "10s", GPUPLAN_SPAWN: "node" })).toBe(
      "p.json",
    );
    for (const env of [
      { GPUPLAN_KILL_GRACE: "later" },
      { GPUPLAN_CPU_PINNING: "yes" },
      { GPUPLAN_SPAWN: "fork" },
    ])
      expect(runPlanFile(["run", "p.json"], env), JSON.stringify(env)).toBeNull();
  });
});

describe("which files will detect the GPUs", () => {
  const plan = (registry: string) =>
    `{\n  "schema": "gpuplan/plan@2",\n  "name": "x",\n  "registry": ${registry},\n  "pipelines": []\n}\n`;

  it("a plan whose registry lists a GPU, and any pipeline file (compiled against the machine)", () => {
    write("gpu.json", plan('[\n    {\n      "gpu": "cuda:0"\n    }\n  ]'));
    write("cpu.json", plan("[]"));
    expect(runDetectsGpus(join(t.dir, "gpu.json"))).toBe(true);
    expect(runDetectsGpus(join(t.dir, "cpu.json"))).toBe(false);
    expect(runDetectsGpus(join(t.dir, "pipeline.yaml"))).toBe(true);
  });

  it("no for what is missing, a folder, or a FIFO (which would block a read)", () => {
    expect(runDetectsGpus(join(t.dir, "missing.json"))).toBe(false);
    expect(runDetectsGpus(t.dir)).toBe(false);
    const fifo = join(t.dir, "plan.json");
    execFileSync("mkfifo", [fifo]);
    expect(runDetectsGpus(fifo)).toBe(false);
  });

  it("never opens a FIFO: a writer waiting on it keeps what it writes for the CLI's own read", () => {
    // `mkfifo p.json; cat plan > p.json &; gpuplan run p.json`: the peek's open let cat's open
    // return, its close then threw cat's plan away, and the CLI's read waited for good.
    write(
      "p.yaml",
      'version: 1\nname: f\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: ["true"], memory: numpy }\n',
    );
    expect(
      gpuplan(["compile", "p.yaml", "-o", "src.json", "--target", "cpu-only"], { cwd: t.dir }).exitCode,
    ).toBe(0);
    const fifo = join(t.dir, "plan.json");
    execFileSync("mkfifo", [fifo]);
    const writer = spawn("sh", ["-c", 'cat "$0" > "$1"', join(t.dir, "src.json"), fifo], { stdio: "ignore" });
    try {
      const r = gpuplan(["run", fifo, "--dry-run"], { cwd: t.dir });
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stdout).toContain("nothing was started");
    } finally {
      writer.kill();
    }
  });

  it("starts children only then, and never with an empty GPUPLAN_* setting (the CLI drops those)", () => {
    write("gpu.json", plan('[{ "gpu": "cuda:0" }]'));
    write("cpu.json", plan("[]"));
    const started: NodeJS.ProcessEnv[] = [];
    const start = (env: NodeJS.ProcessEnv) => started.push(env);
    const env = { PATH: "/usr/bin" };
    expect(prestartRunProbes(["run", join(t.dir, "cpu.json")], start, env)).toBe(false);
    expect(prestartRunProbes(["run", join(t.dir, "gpu.json")], start, { ...env, GPUPLAN_SPAWN: "" })).toBe(
      false,
    );
    expect(prestartRunProbes(["run", join(t.dir, "gpu.json")], start, env)).toBe(true);
    expect(started).toEqual([env]);
  });
});

describe("which check's child may serve the run's memory sampler", () => {
  const task = (name: "nvml" | "cuda" | "rocm-smi" | "amd-smi" | "hip") => ({
    name,
    library: `/lib/${name}.so`,
  });
  it("the memory probes of a group, unless it runs HIP", () => {
    expect(servingTasks([task("nvml"), task("cuda")])).toEqual([task("nvml")]);
    expect(servingTasks([task("cuda")])).toEqual([]);
    expect(servingTasks([task("rocm-smi"), task("amd-smi")])).toEqual([task("rocm-smi"), task("amd-smi")]);
    expect(servingTasks([task("rocm-smi"), task("amd-smi"), task("hip")])).toEqual([]);
  });
});

describe.skipIf(!fakeLibsBuilt || process.platform !== "linux")("the run's pre-started child", () => {
  it("is the one the plan's check against the machine uses", async () => {
    const env = fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") });
    write("gpu.json", '{ "registry": [{ "gpu": "cuda:0" }] }');
    expect(prestartRunProbes(["run", join(t.dir, "gpu.json")], prestartVerificationProbes, env)).toBe(true);
    const waiting = claimPrestarted();
    expect(waiting.size).toBe(1);
    const [child] = waiting.values();
    // Handed back as detect() would find it, then claimed by the check's detection.
    const { offerPrestarted } = await import("../../src/detect/prestarted.js");
    offerPrestarted(waiting);
    const inv = await detectInventory({ env });
    expect(inv.gpus).toHaveLength(13);
    expect(claimPrestarted().size).toBe(0);
    expect((await child!.run).end).toEqual({ kind: "done" });
  });

  it("serves the sampler after NVML and CUDA, never after HIP (whose runtime would keep the child a GPU process)", async () => {
    const nvidia = fakeEnv("busy.scenario", { nvml: fakeLib("nvml"), cuda: fakeLib("cuda") });
    const amd = fakeEnv("amd-mi300x.scenario", {
      rocmSmi: fakeLib("rocmSmi"),
      amdSmi: fakeLib("amdSmi"),
      hip: fakeLib("hip"),
    });
    for (const [env, serves] of [
      [nvidia, true],
      [amd, false],
    ] as const) {
      prestartVerificationProbes(env, { serveSampler: true });
      const [child] = [...claimPrestarted().values()];
      const { offerPrestarted } = await import("../../src/detect/prestarted.js");
      offerPrestarted(new Map([[child!.key, child!]]));
      const inv = await detectInventory({ env });
      expect(inv.gpus.length).toBeGreaterThan(0);
      expect((await child!.run).end).toEqual({ kind: "done" });
      const plan = planVendorProbes(env);
      const adopted = claimServing(childKey(memoryTasks(plan.tasks), plan.child));
      expect(adopted !== null, JSON.stringify(plan.tasks.map((t) => t.name))).toBe(serves);
      adopted?.kill("SIGKILL");
    }
  });

  it("through bin/gpuplan.js: one probe child for a GPU run (its check, then its sampler), none for a CPU run", () => {
    // A preload counts the probe children gpuplan spawns, and whether each serves rounds
    // (`"serve":true`). The check's child comes before the CLI has loaded and is the only one:
    // it answers the check, then serves the run's memory sampler. A pre-started child nobody
    // claimed, or a sampler of its own, would be a second.
    const log = join(t.dir, "spawns.log");
    const preload = join(t.dir, "count-spawns.cjs");
    write(
      "count-spawns.cjs",
      `const cp = require("node:child_process"); const { appendFileSync } = require("node:fs"); const spawn = cp.spawn;
cp.spawn = function (file, args, ...rest) {
  if (Array.isArray(args) && String(args[0]).endsWith("probe-child.cjs")) appendFileSync(${JSON.stringify(log)}, (String(args[1]).includes('"serve":true') ? "serving" : "once") + (Object.keys(require.cache).some((f) => f.endsWith("main.js")) ? "" : " before the CLI") + "\\n");
  return spawn.call(this, file, args, ...rest);
};\n`,
    );
    const env = {
      ...fakeEnv(
        "h100x8-mig.scenario",
        { nvml: fakeLib("nvml") },
        {
          GPUPLAN_FAKE_SCENARIO: scenarioWith(
            "h100x8-mig.scenario",
            `nvml.init_log = ${join(t.dir, "init.log")}`,
          ),
        },
      ),
      GPUPLAN_LOCK_DIR: join(t.dir, "locks"),
      CI: "1",
    };
    write(
      "p.yaml",
      // Long enough for the sampler to read while it runs.
      'version: 1\nname: p\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: [sleep, "0.6"], memory: torch, vram: 1GiB }\n',
    );
    write(
      "cpu.yaml",
      'version: 1\nname: c\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: ["true"], memory: numpy }\n',
    );
    expect(gpuplan(["compile", "p.yaml", "-o", "gpu.json"], { cwd: t.dir, env })).toMatchObject({
      exitCode: 0,
    });
    expect(
      gpuplan(["compile", "cpu.yaml", "--target", "cpu-only", "-o", "cpu.json"], { cwd: t.dir, env }),
    ).toMatchObject({ exitCode: 0 });
    const spawns = (plan: string) => {
      rmSync(log, { force: true });
      rmSync(join(t.dir, "init.log"), { force: true });
      const r = gpuplan(["run", plan, "--ui", "plain"], {
        cwd: t.dir,
        env,
        nodeArgs: ["--require", preload],
      });
      expect(r.exitCode, r.stderr).toBe(0);
      return existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
    };
    expect(spawns("gpu.json")).toEqual(["serving before the CLI"]);
    // The fake NVML logs each initialisation's pid: the check's, then the sampler's rounds, all
    // in that one process.
    const inits = readFileSync(join(t.dir, "init.log"), "utf8").trim().split("\n");
    expect(inits.length).toBeGreaterThan(1);
    expect(new Set(inits).size).toBe(1);
    expect(spawns("cpu.json")).toEqual([]);
  });

  it("the child that serves the sampler never outlives gpuplan: a run, a dry run, a run stopped with SIGINT", async () => {
    const env = {
      ...fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") }),
      GPUPLAN_LOCK_DIR: join(t.dir, "locks"),
      CI: "1",
    };
    write(
      "p.yaml",
      'version: 1\nname: p\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: [sleep, "0.5"], memory: torch, vram: 1GiB }\n',
    );
    expect(gpuplan(["compile", "p.yaml", "-o", "gpu.json"], { cwd: t.dir, env })).toMatchObject({
      exitCode: 0,
    });
    /** Live probe children whose request names `pid` as their parent (a zombie has no cmdline). */
    const probeChildrenOf = (pid: number) =>
      readdirSync("/proc")
        .filter((d) => /^\d+$/.test(d))
        .filter((d) => {
          try {
            const cmdline = readFileSync(`/proc/${d}/cmdline`, "utf8");
            return cmdline.includes("probe-child.cjs") && new RegExp(`"parentPid":${pid}[,}]`).test(cmdline);
          } catch {
            return false;
          }
        });
    const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
    const runOnce = async (args: string[], interrupt: boolean) => {
      const child = spawn(process.execPath, [join(ROOT, "bin/gpuplan.js"), "run", "gpu.json", ...args], {
        cwd: t.dir,
        env,
        stdio: ["ignore", "ignore", "pipe"],
      });
      let stderr = "";
      child.stderr.on("data", (d) => {
        stderr += String(d);
      });
      const exited = new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
      let seen = 0;
      if (interrupt) {
        // Stopped while its step runs, once its one probe child has answered the check and serves.
        for (let i = 0; i < 200 && !existsSync(join(t.dir, "started")); i++) await sleep(25);
        seen = probeChildrenOf(child.pid!).length;
        child.kill("SIGINT");
      }
      const code = await exited;
      // Gone with gpuplan: its stdin closed, the exit hook's SIGKILL, and the kernel's PDEATHSIG
      // (ffi.ts) each end it; this checks the outcome, within a second.
      for (let i = 0; i < 20 && probeChildrenOf(child.pid!).length > 0; i++) await sleep(50);
      return { code, stderr, seen, left: probeChildrenOf(child.pid!) };
    };
    const done = await runOnce(["--ui", "plain"], false);
    expect(done.code, done.stderr).toBe(0);
    expect(done.left).toEqual([]);
    const dry = await runOnce(["--dry-run"], false);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.left).toEqual([]);
    write(
      "p.yaml",
      'version: 1\nname: p\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: [sh, -c, "touch started; exec sleep 30"], memory: torch, vram: 1GiB }\n',
    );
    expect(gpuplan(["compile", "p.yaml", "-o", "gpu.json"], { cwd: t.dir, env })).toMatchObject({
      exitCode: 0,
    });
    const stopped = await runOnce(["--ui", "plain"], true);
    expect(stopped.code, stopped.stderr).toBe(130);
    expect(stopped.seen).toBe(1);
    expect(stopped.left).toEqual([]);
  }, 60_000);
});
