// `gpuplan export` as a command (no cluster needed): where the node type comes from, bad flags and
// bad plans as clear errors, nothing written on errors, and no heavy modules loaded.
import {
  existsSync,
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import validateSlurmExport from "../../src/generated/slurm-export-validator.js";
import { gpuplan, loadedModules } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-export-cli-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PIPELINE = [
  "version: 1",
  "name: demo",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1] }",
  "    steps: [{ id: a, run: [a], memory: torch, vram: 8GiB, timeout: 10m }]",
  "  - name: host",
  "    steps: [{ id: b, run: [b], memory: numpy }]",
  "",
].join("\n");

const NODE = {
  gpus: [{ name: "NVIDIA H100 80GB HBM3", memory: 85520809984, count: 4, compute_capability: "9.0" }],
  cpu: { threads: 16, memory: "16000MiB" },
  slurm: {
    node_type: "h100x4-16cpu-16000mib",
    gres: [{ model: "NVIDIA H100 80GB HBM3", type: "h100", count: 4 }],
  },
};

const run = (args: string[]) => gpuplan(args, { cwd: dir });

beforeAll(() => {
  writeFileSync(join(dir, "pipeline.yaml"), PIPELINE);
  writeFileSync(join(dir, "node.json"), JSON.stringify(NODE));
  expect(run(["compile", "pipeline.yaml", "--inventory", "node.json", "-o", "plan.json"]).exitCode).toBe(0);
  expect(run(["compile", "pipeline.yaml", "--target", "dgx-h100", "-o", "dgx.json"]).exitCode).toBe(0);
});

describe("gpuplan export --to slurm", () => {
  it("finds the plan's own node type inventory again (file:node.json, same fingerprint) and writes the folder", () => {
    const r = run(["export", "plan.json", "--to", "slurm", "-o", "out"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toContain("gpuplan export: 2 job arrays for 3 pipelines in");
    expect(r.stdout).toContain("(node type h100x4-16cpu-16000mib)");
    expect(r.stdout).toMatch(
      /01-gpu-h100-1\.sbatch\s+2 tasks\s+--gres=gpu:h100:1 --cpus-per-task=4 --mem=4000M --time=00:11:00/,
    );
    expect(readFileSync(join(dir, "out/plan.json"), "utf8")).toBe(
      readFileSync(join(dir, "plan.json"), "utf8"),
    );
    expect(statSync(join(dir, "out/submit.sh")).mode & 0o111).not.toBe(0);
    expect(existsSync(join(dir, "out/logs"))).toBe(true);
    expect(readFileSync(join(dir, "out/01-gpu-h100-1.sbatch"), "utf8")).toContain(`#SBATCH --chdir=${dir}\n`);
  });

  it("the node type is found whatever the inventory's path was spelled as: a plan in a subfolder, --inventory ./node.json", () => {
    mkdirSync(join(dir, "plans"), { recursive: true });
    // The plan records file:../node.json; compile was given node.json.
    expect(
      run(["compile", "pipeline.yaml", "--inventory", "node.json", "-o", "plans/sub.json"]).exitCode,
    ).toBe(0);
    const found = run(["export", "plans/sub.json", "--to", "slurm", "-o", "sub-out", "--json"]);
    expect(found.exitCode, found.stderr).toBe(0);
    const report = JSON.parse(found.stdout);
    expect(report.nodeType).toBe("node type h100x4-16cpu-16000mib");
    expect(report.problems).toEqual([]);
    for (const [i, spelling] of ["./node.json", join(dir, "node.json")].entries()) {
      const named = run([
        "export",
        "plan.json",
        "--to",
        "slurm",
        "--inventory",
        spelling,
        "-o",
        `named-${i}`,
        "--json",
      ]);
      expect(named.exitCode, named.stderr).toBe(0);
      expect(JSON.parse(named.stdout).problems, spelling).toEqual([]);
    }
  });

  it("a plan compiled for a built-in target takes its shares from the target: DGX H100, 224 threads / 8 GPUs", () => {
    const r = run(["export", "dgx.json", "--to", "slurm", "-o", "dgx-out", "--json"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(report.nodeType).toBe("target dgx-h100");
    expect(report.arrays[0]).toMatchObject({ gres: "gpu:h100:1", cpusPerTask: 28 });
  });

  it("a plan whose inventory cannot be found says so and asks Slurm's defaults", () => {
    mkdirSync(join(dir, "elsewhere"));
    writeFileSync(join(dir, "elsewhere/plan.json"), readFileSync(join(dir, "plan.json")));
    rmSync(join(dir, "node.json.bak"), { force: true });
    writeFileSync(join(dir, "node.json.bak"), readFileSync(join(dir, "node.json")));
    rmSync(join(dir, "node.json"));
    try {
      const r = run(["export", "elsewhere/plan.json", "--to", "slurm", "-o", "bare", "--json"]);
      expect(r.exitCode, r.stderr).toBe(0);
      const report = JSON.parse(r.stdout);
      expect(report.nodeType).toBeNull();
      expect(report.arrays[0]).toMatchObject({ cpusPerTask: 1, memMiB: null });
      expect(report.problems.map((p: { code: string }) => p.code)).toContain("slurm-node-type-unknown");
      expect(r.stderr).toContain("--inventory NODE.json");
    } finally {
      writeFileSync(join(dir, "node.json"), readFileSync(join(dir, "node.json.bak")));
    }
  });

  it.each([
    [["--to", "pbs"], "argument 'pbs' is invalid"],
    [["--throttle", "0"], "--throttle 0: not a positive whole number"],
    [["--sbatch-arg=--array=1-3"], "gpuplan writes this one itself"],
    // getopt_long's spellings of the same: a value attached, after flags, an abbreviation.
    [["--sbatch-arg=-a0"], "gpuplan writes this one itself"],
    [["--sbatch-arg=-Ha0-1"], "gpuplan writes this one itself"],
    [["--sbatch-arg=--arr=0"], "gpuplan writes this one itself"],
    [["--sbatch-arg=--wr=true"], "gpuplan writes this one itself"],
    // sbatch would not return until the array ended.
    [["--sbatch-arg=--wait"], "relies on sbatch returning"],
    [["--sbatch-arg=-W"], "relies on sbatch returning"],
    // The arrays would run on another cluster, where squeue, sacct and scancel do not look.
    [["--sbatch-arg=--clusters=c2"], "follows the jobs on this cluster"],
    [["--sbatch-arg=--clu=c2"], "follows the jobs on this cluster"],
    [["--sbatch-arg=-Mc2"], "follows the jobs on this cluster"],
    [["--sbatch-arg=-HM", "--sbatch-arg=c2"], "follows the jobs on this cluster"],
    [["--sbatch-arg=--comment=a b"], "one sbatch option without spaces"],
    [["--gres-type", "h100 x"], "not [MODEL=]TYPE"],
    [["--partition", "gpu;reboot"], "not a Slurm partition name"],
    [["--time", "soon"], "not a duration"],
    [["--mem", "lots"], "not a size"],
    [["--time-factor", "0.5"], "a number from 1 to 100"],
  ])("bad flag %j: exit 2 with the reason, nothing written", (flags, says) => {
    const out = `bad-${Math.random().toString(36).slice(2)}`;
    const to = flags.includes("--to") ? [] : ["--to", "slurm"];
    const r = run(["export", "plan.json", ...to, "-o", out, ...flags]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(says);
    expect(r.stderr).not.toMatch(/internal error|\bat .*:\d+:\d+/);
    expect(existsSync(join(dir, out))).toBe(false);
  });

  it("an output folder that is not empty needs --force", () => {
    mkdirSync(join(dir, "full"));
    writeFileSync(join(dir, "full/keep.txt"), "mine");
    const r = run(["export", "plan.json", "--to", "slurm", "-o", "full"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("is not empty");
    const forced = run(["export", "plan.json", "--to", "slurm", "-o", "full", "--force"]);
    expect(forced.exitCode, forced.stderr).toBe(0);
    expect(readFileSync(join(dir, "full/keep.txt"), "utf8")).toBe("mine");
  });

  it("--force over a folder with links planted at gpuplan's file names replaces the links, never their targets", () => {
    mkdirSync(join(dir, "planted"));
    writeFileSync(join(dir, "victim.txt"), "precious\n");
    for (const name of ["submit.sh", "plan.json"]) symlinkSync("../victim.txt", join(dir, "planted", name));
    const r = run(["export", "plan.json", "--to", "slurm", "-o", "planted", "--force"]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(readFileSync(join(dir, "victim.txt"), "utf8")).toBe("precious\n");
    expect(statSync(join(dir, "victim.txt")).mode & 0o111).toBe(0);
    for (const name of ["submit.sh", "plan.json"])
      expect(lstatSync(join(dir, "planted", name)).isFile()).toBe(true);
    expect(statSync(join(dir, "planted/submit.sh")).mode & 0o111).not.toBe(0);
  });

  it("-o naming a file says so, as the other outputs do (it said 'cannot use it as a folder (ENOTDIR)')", () => {
    const r = run(["export", "plan.json", "--to", "slurm", "-o", "plan.json"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain(
      `gpuplan: error: cannot write folder ${join(dir, "plan.json")}: it is a file, not a folder  [unwritable-file]`,
    );
    const under = run(["export", "plan.json", "--to", "slurm", "-o", "plan.json/out"]);
    expect(under.exitCode).toBe(2);
    expect(under.stderr).toContain(
      `cannot write folder ${join(dir, "plan.json/out")}: a file stands where a folder is needed  [unwritable-file]`,
    );
  });

  it("an output folder that cannot be made (under /proc) is a usage error at once, never a hang", () => {
    const r = run(["export", "plan.json", "--to", "slurm", "-o", "/proc/gpuplan-nope/out"]);
    expect(r.exitCode, r.stderr).toBe(2);
    expect(r.stderr).toContain("/proc/gpuplan-nope");
    expect(r.stderr).not.toMatch(/internal error|\bat .*:\d+:\d+/);
  });

  it("a file that is not a plan is a usage error, never a stack trace", () => {
    const r = run(["export", "pipeline.yaml", "--to", "slurm", "-o", "nope"]);
    expect(r.exitCode).toBe(2);
    expect(r.stderr).toContain("is not JSON");
    writeFileSync(join(dir, "not-plan.json"), '{"schema": "gpuplan/plan@1"}');
    const s = run(["export", "not-plan.json", "--to", "slurm", "-o", "nope"]);
    expect(s.exitCode).toBe(2);
    expect(s.stderr).toContain("is not a gpuplan plan");
  });

  it("a later plan format or a hand edit that breaks the plan: refused as run refuses it, located, nothing written", () => {
    const text = readFileSync(join(dir, "plan.json"), "utf8");
    writeFileSync(join(dir, "later.json"), text.replace("gpuplan/plan@2", "gpuplan/plan@3"));
    const later = run(["export", "later.json", "--to", "slurm", "-o", "later-out"]);
    expect(later.exitCode, later.stderr).toBe(1);
    expect(later.stderr).toMatch(
      /^later\.json:2:13 +error +later\.json is in plan format gpuplan\/plan@3.*\[plan-too-new\]/,
    );
    expect(later.stderr).toContain("gpuplan export: nothing written");
    const plan = JSON.parse(text);
    plan.pipelines[1].name = plan.pipelines[0].name;
    writeFileSync(join(dir, "twice.json"), JSON.stringify(plan, null, 2));
    const twice = run(["export", "twice.json", "--to", "slurm", "-o", "twice-out", "--json"]);
    expect(twice.exitCode, twice.stderr).toBe(1);
    const report = JSON.parse(twice.stdout);
    expect(validateSlurmExport(report), JSON.stringify(validateSlurmExport.errors)).toBe(true);
    expect(report).toMatchObject({ ok: false, submit: null, arrays: [] });
    expect(report.problems).toMatchObject([
      { code: "plan-inconsistent", pointer: "/pipelines/1/name", line: expect.any(Number) },
    ]);
    expect(existsSync(join(dir, "later-out")) || existsSync(join(dir, "twice-out"))).toBe(false);
  });

  it("hostile executor settings in a hand-edited plan, or a folder with a space: exit 1, nothing written", () => {
    const plan = JSON.parse(readFileSync(join(dir, "plan.json"), "utf8"));
    plan.settings.executor = {
      slurm: { partition: "gpu\n#SBATCH --uid=0", sbatchArgs: ["--wrap=rm -rf /"] },
    };
    writeFileSync(join(dir, "hostile.json"), JSON.stringify(plan));
    const r = run(["export", "hostile.json", "--to", "slurm", "-o", "hostile-out"]);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toContain("[slurm-unsafe-value]");
    expect(r.stderr).toContain("nothing written");
    expect(existsSync(join(dir, "hostile-out"))).toBe(false);
    const spaced = run(["export", "plan.json", "--to", "slurm", "-o", "with space"]);
    expect(spaced.exitCode).toBe(1);
    expect(spaced.stderr).toContain("[slurm-unsafe-path]");
    expect(existsSync(join(dir, "with space"))).toBe(false);
  });

  it("does not load koffi, ink or react", () => {
    const { result, modules } = loadedModules(
      ["export", join(dir, "plan.json"), "--to", "slurm", "-o", join(dir, "modules-out")],
      "koffi|/ink/|/react/",
    );
    expect(result.exitCode, result.stderr).toBe(0);
    expect(modules).toEqual([]);
  });
});
