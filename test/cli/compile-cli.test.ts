import { copyFileSync, existsSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { basename, join, relative } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, loadedModules, tempDir } from "../helpers/cli.js";

const EXAMPLE = "examples/cell-painting.yaml";
let tmp: ReturnType<typeof tempDir>;
beforeEach(() => {
  tmp = tempDir();
});
afterEach(() => tmp.cleanup());

const BROKEN = `version: 1
pipelines:
  - name: p
    steps:
      - id: seg
        run: [python3, seg.py]
        memory: Torch
        vram: 8GiB
`;

describe("compile --check and -o", () => {
  it("passes an up-to-date plan and fails a stale one with stale-plan", () => {
    const pipeline = join(tmp.dir, "pipeline.yaml");
    const plan = join(tmp.dir, "plan.json");
    copyFileSync(EXAMPLE, pipeline);
    expect(gpuplan(["compile", pipeline, "--target", "dgx-h100", "-o", plan]).exitCode).toBe(0);

    const fresh = gpuplan(["compile", pipeline, "--target", "dgx-h100", "--check", plan]);
    expect(fresh.exitCode).toBe(0);
    expect(fresh.stdout).toBe("");
    expect(fresh.stderr).toContain("is up to date");

    writeFileSync(pipeline, readFileSync(pipeline, "utf8").replace("estimate: 12m", "estimate: 13m"));
    const stale = gpuplan(["compile", pipeline, "--target", "dgx-h100", "--check", plan, "--format", "json"]);
    expect(stale.exitCode).toBe(1);
    const report = JSON.parse(stale.stdout);
    expect(report.ok).toBe(false);
    expect(report.check).toEqual({ plan, upToDate: false });
    expect(report.problems).toEqual([
      expect.objectContaining({ code: "stale-plan", severity: "error", file: plan }),
    ]);
    expect(report.problems[0].message).toContain("the pipeline file changed");
    expect(report.problems[0].hint).toContain(`-o ${plan}`);
  });

  it("reports a plan compiled for another inventory as stale", () => {
    const plan = join(tmp.dir, "plan.json");
    expect(gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "-o", plan]).exitCode).toBe(0);
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-a100-80gb", "--check", plan]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("stale-plan");
    expect(r.stderr).toContain("the inventory changed (target:dgx-h100 → target:dgx-a100-80gb)");
  });

  it("refuses a plan whose inventory.label names no inventory, at that key, instead of detecting this machine", () => {
    const plan = join(tmp.dir, "plan.json");
    expect(gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "-o", plan]).exitCode).toBe(0);
    const text = readFileSync(plan, "utf8");
    writeFileSync(plan, text.replace('"label": "target:dgx-h100"', '"label": ""'));
    const r = gpuplan(["compile", EXAMPLE, "--check", plan, "--format", "json"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(1);
    const line = text.split("\n").findIndex((l) => l.includes('"label"')) + 1;
    expect(JSON.parse(r.stdout).problems).toEqual([
      expect.objectContaining({
        code: "invalid-plan",
        file: plan,
        line,
        message: expect.stringContaining('records its inventory as "", which names no target'),
      }),
    ]);
  });

  it("writes -o atomically: the complete plan, no temporary files left", () => {
    const plan = join(tmp.dir, "plan.json");
    writeFileSync(plan, "old content");
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "-o", plan]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(`wrote ${plan}`);
    expect(readdirSync(tmp.dir)).toEqual(["plan.json"]);
    const text = readFileSync(plan, "utf8");
    expect(text.endsWith("}\n")).toBe(true);
    expect(JSON.parse(text).schema).toBe("gpuplan/plan@2");
    // The same bytes as the plan printed on stdout, but for the pipeline's path: relative to the
    // plan's folder, which for stdout is the pipeline's own.
    const recorded = relative(tmp.dir, EXAMPLE);
    expect(gpuplan(["compile", EXAMPLE, "--target", "dgx-h100"]).stdout).toBe(
      text.replaceAll(`"${recorded}`, `"${basename(EXAMPLE)}`),
    );
  });

  it("writes nothing when the pipeline has errors", () => {
    const pipeline = join(tmp.dir, "pipeline.yaml");
    const plan = join(tmp.dir, "plan.json");
    writeFileSync(pipeline, BROKEN);
    expect(gpuplan(["compile", pipeline, "--target", "dgx-h100", "-o", plan]).exitCode).toBe(1);
    expect(readdirSync(tmp.dir)).toEqual(["pipeline.yaml"]);
  });

  it("rejects --check with -o", () => {
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "--check", "a.json", "-o", "b.json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("--check and --output cannot be used together");
  });

  it("fails with exit 2 when the --check plan cannot be read", () => {
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "--check", join(tmp.dir, "missing.json")]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("cannot read plan");
    expect(hasCrashed(r)).toBe(false);
  });
});

describe("compile output formats", () => {
  it("--format github prints workflow annotations on stdout", () => {
    const pipeline = join(tmp.dir, "pipeline.yaml");
    writeFileSync(pipeline, BROKEN);
    const r = gpuplan(["compile", pipeline, "--target", "dgx-h100", "--format", "github"]);
    expect(r.exitCode).toBe(1);
    const lines = r.stdout.trimEnd().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toBe(
      `::error file=${pipeline},line=7,col=17,title=gpuplan unknown-memory-type::unknown memory type \`Torch\`%0Ahint: did you mean \`torch\`? known types: numpy, cupy, torch, tensorflow, jax, pyclesperanto (case-sensitive)`,
    );
  });

  it("--format github uses ::warning for warnings", () => {
    const pipeline = join(tmp.dir, "pipeline.yaml");
    writeFileSync(pipeline, BROKEN.replace("Torch", "torch").replace("        vram: 8GiB\n", ""));
    const r = gpuplan(["compile", pipeline, "--target", "rtx4090", "--format", "github"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^::warning file=.*,line=5,col=9,title=gpuplan missing-vram::/);
  });

  it("human format shows a code frame on stderr and no colour when not a TTY", () => {
    const pipeline = join(tmp.dir, "pipeline.yaml");
    writeFileSync(pipeline, BROKEN);
    for (const env of [{ NO_COLOR: undefined }, { NO_COLOR: "1" }]) {
      const r = gpuplan(["compile", pipeline, "--target", "dgx-h100"], { env });
      expect(r.exitCode).toBe(1);
      expect(r.stdout).toBe("");
      expect(r.stderr).toContain(
        `${pipeline}:7:17  error  unknown memory type \`Torch\`  [unknown-memory-type]`,
      );
      expect(r.stderr).toContain("  > 7 |         memory: Torch\n");
      expect(r.stderr).toMatch(/\n {6,}\| {17}\^\n/);
      expect(r.stderr).toContain("hint: did you mean `torch`?");
      expect(r.stderr).toContain("1 error, 0 warnings; no plan written");
      // biome-ignore lint/suspicious/noControlCharactersInRegex: looking for ANSI escapes
      expect(r.stderr).not.toMatch(/\u001b\[/);
    }
  });

  it("NO_COLOR wins over FORCE_COLOR, and FORCE_COLOR alone colours stderr", () => {
    const pipeline = join(tmp.dir, "pipeline.yaml");
    writeFileSync(pipeline, BROKEN);
    const forced = gpuplan(["compile", pipeline, "--target", "dgx-h100"], {
      env: { NO_COLOR: undefined, FORCE_COLOR: "1" },
    });
    expect(forced.stderr).toContain("\u001b[");
    const both = gpuplan(["compile", pipeline, "--target", "dgx-h100"], {
      env: { NO_COLOR: "1", FORCE_COLOR: "1" },
    });
    expect(both.stderr).not.toContain("\u001b[");
  });

  it("prints the plan on stdout and a summary on stderr by default", () => {
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100"]);
    expect(r.exitCode).toBe(0);
    expect(JSON.parse(r.stdout).schema).toBe("gpuplan/plan@2");
    expect(r.stderr).toMatch(
      /^gpuplan compile: 8 pipelines \(8 on 8 GPUs\), est\. makespan .*plan on stdout\n$/,
    );
  });

  it("--format json prints one versioned report on stdout and nothing on stderr", () => {
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "--format", "json"]);
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    const report = JSON.parse(r.stdout);
    expect(report).toMatchObject({ schema: "gpuplan/compile-report@1", ok: true, errors: 0, warnings: 0 });
    expect(report.plan.schema).toBe("gpuplan/plan@2");
  });
});

describe("compile usage errors (exit 2, no stack trace)", () => {
  it("names a missing pipeline file", () => {
    const r = gpuplan(["compile", "does/not/exist.yaml", "--target", "dgx-h100"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toBe(
      "gpuplan: error: cannot read pipeline file does/not/exist.yaml: no such file  [unreadable-file]\n" +
        "  hint: check the path (a relative path starts from the current folder)\n",
    );
    expect(hasCrashed(r)).toBe(false);
  });

  it("names a directory given as the pipeline file", () => {
    const r = gpuplan(["compile", tmp.dir, "--target", "dgx-h100"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("it is a directory");
  });

  it("names a missing inventory file", () => {
    const r = gpuplan(["compile", EXAMPLE, "--inventory", "nope.yaml"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("cannot read inventory file nope.yaml: no such file");
    expect(hasCrashed(r)).toBe(false);
  });

  it("suggests a target for a typo", () => {
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-h10"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("unknown target `dgx-h10`");
    expect(r.stderr).toContain("did you mean `dgx-h100`?");
    const nope = gpuplan(["compile", EXAMPLE, "--target", "nope"]);
    expect(nope.exitCode).toBe(2);
    expect(nope.stderr).toContain("known targets: dgx-a100-80gb,");
    expect(hasCrashed(nope)).toBe(false);
  });

  it("rejects --inventory with --target", () => {
    const r = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "--inventory", "fixtures/x.yaml"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("--inventory and --target cannot be used together");
  });

  it("rejects an unknown flag and a bad --format", () => {
    const flag = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "--frobnicate"]);
    expect(flag.exitCode).toBe(2);
    expect(flag.stderr).toContain("unknown option '--frobnicate'");
    const format = gpuplan(["compile", EXAMPLE, "--target", "dgx-h100", "--format", "xml"]);
    expect(format.exitCode).toBe(2);
    expect(format.stderr).toContain("xml");
    expect(hasCrashed(format)).toBe(false);
  });

  it("accepts target names case-insensitively", () => {
    expect(gpuplan(["compile", EXAMPLE, "--target", "DGX-H100"]).exitCode).toBe(0);
  });
});

describe("other commands", () => {
  it("gpuplan targets --json lists the built-in profiles", () => {
    const r = gpuplan(["targets", "--json"]);
    expect(r.exitCode).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.schema).toBe("gpuplan/targets@1");
    const names = out.targets.map((t: { name: string }) => t.name);
    expect(names).toEqual(
      expect.arrayContaining(["dgx-a100-80gb", "dgx-h100", "rtx4090", "mi300x-8", "cpu-only"]),
    );
    for (const t of out.targets) expect(t.inventory.cpu.threads).toBeGreaterThan(0);
  });

  it("gpuplan targets prints a table", () => {
    const r = gpuplan(["targets"]);
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toMatch(/^dgx-a100-80gb +8× NVIDIA A100-SXM4-80GB 80 GiB +256 threads$/m);
    expect(r.stdout).toMatch(/^cpu-only +no GPUs +16 threads$/m);
  });

  it("gpuplan --help lists the commands and exits 0", () => {
    const r = gpuplan(["--help"]);
    expect(r.exitCode).toBe(0);
    for (const cmd of ["compile", "detect", "targets", "presets"])
      expect(r.stdout).toMatch(new RegExp(`^  ${cmd}\\b`, "m"));
  });

  it("an unknown command exits 2", () => {
    const r = gpuplan(["frobnicate"]);
    expect(r.exitCode).toBe(2);
    expect(hasCrashed(r)).toBe(false);
  });
});

describe("start-up stays lean", () => {
  const HEAVY = "(^|[/\\\\])(koffi|ink|react)([/\\\\.]|$)";

  it("the module recorder sees what it should (control)", () => {
    // compile is loaded lazily (a chunk of the bundle); yaml is required only to locate a problem in
    // syntax the streaming locator leaves to the yaml document (here an explicit `? key`).
    const file = join(tmp.dir, "explicit-key.yaml");
    writeFileSync(file, "? version\n: 1\npipelines: []\n");
    const { result, modules } = loadedModules(
      ["compile", file, "--target", "mi300x-8"],
      "(^|[/\\\\])(yaml$|compile[-.])",
    );
    expect(result.exitCode).toBe(1);
    expect(modules.some((m) => /^(esm|cjs) file:.*\/dist\/bundle\/compile-/.test(m))).toBe(true);
    expect(modules.some((m) => m === "cjs yaml" || /node_modules\/yaml\//.test(m))).toBe(true);
  });

  it("locating problems in ordinary YAML never loads the yaml package", () => {
    const { result, modules } = loadedModules(
      ["compile", "examples/jax-training.yaml", "--target", "mi300x-8"],
      "(^|[/\\\\])yaml$",
    );
    expect(result.exitCode).toBe(1);
    expect(result.stderr).toMatch(/jax-training\.yaml:\d+:\d+/);
    expect(modules.filter((m) => m === "cjs yaml" || /node_modules\/yaml\//.test(m))).toEqual([]);
  });

  it.each([
    ["--help", ["--help"]],
    ["compile (plan)", ["compile", EXAMPLE, "--target", "dgx-h100"]],
    [
      "compile (problems)",
      ["compile", "examples/jax-training.yaml", "--target", "mi300x-8", "--format", "github"],
    ],
    [
      "compile --inventory",
      [
        "compile",
        "fixtures/compile/mig-inventory/pipeline.yaml",
        "--inventory",
        "fixtures/compile/mig-inventory/inventory.json",
      ],
    ],
    ["targets", ["targets"]],
  ])("%s does not load koffi, ink or react", (_, args) => {
    const { result, modules } = loadedModules(args, HEAVY);
    expect(hasCrashed(result)).toBe(false);
    expect(modules).toEqual([]);
  });
});

describe("compile without --history", () => {
  // learn-estimates.ts needs only stepKey (src/history/step-key.ts); the history reader, and the
  // run-folder and journal readers it brings, load only for --history
  // (docs/decisions/0017-compile-without-history-code.md).
  const HISTORY_CODE = /\bfunction (readHistory|readRunFolder|readJournal)\(/;
  const historyCode = (modules: string[]) =>
    modules
      .map((m) => m.replace(/^(esm|cjs) file:\/\//, ""))
      .filter((f) => HISTORY_CODE.test(readFileSync(f, "utf8")))
      .map((f) => basename(f));

  it("loads none of the run-history readers", () => {
    const { result, modules } = loadedModules(["compile", EXAMPLE, "--target", "dgx-h100"], "dist/bundle/");
    expect(result.exitCode, result.stderr).toBe(0);
    expect(modules.length).toBeGreaterThan(10);
    expect(historyCode(modules)).toEqual([]);
  });

  it("loads them with --history (control: the check finds them where they are)", () => {
    const { result, modules } = loadedModules(
      ["compile", EXAMPLE, "--target", "dgx-h100", "--history", "20990101T000000Z-ffffff"],
      "dist/bundle/",
    );
    expect(hasCrashed(result)).toBe(false);
    expect(historyCode(modules).length).toBeGreaterThan(0);
  });
});

describe("paths", () => {
  it("the example pipeline files exist where the tests expect them", () => {
    expect(existsSync(EXAMPLE)).toBe(true);
  });
});
