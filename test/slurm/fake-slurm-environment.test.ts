// biome-ignore-all lint/suspicious/noTemplateCurlyInString: the stand-ins are shell scripts, where ${…} is the shell's own
// Slurm's client commands read options from the environment, and sbatch's beat the script's
// #SBATCH lines: a user's shell must not change what gpuplan submitted (which tasks run, where
// Slurm's logs go, requeueing, the GPUs) nor which of its jobs squeue lists and scancel cancels.
// Stand-ins first on PATH record each call and the SBATCH_/SQUEUE_/SCANCEL_/SLURM_ variables they
// were given; each prints FAKE/NAME.out.
import { execFileSync, spawnSync } from "node:child_process";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { sbatchOverrides } from "../../src/slurm/command-environment.js";
import { slurmCommandRunner } from "../../src/slurm/run-slurm-command.js";
import { gpuplan, hasCrashed } from "../helpers/cli.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-fake-slurm-env-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const fake = join(dir, "fake-bin");

const NODE = {
  gpus: [{ name: "NVIDIA H100 80GB HBM3", memory: 85520809984, count: 4, compute_capability: "9.0" }],
  cpu: { threads: 16, memory: "16000MiB" },
  slurm: {
    node_type: "h100x4-16cpu-16000mib",
    gres: [{ model: "NVIDIA H100 80GB HBM3", type: "h100", count: 4 }],
  },
};

const PIPELINE = [
  "version: 1",
  "name: envy",
  "pipelines:",
  "  - name: p{i}",
  "    matrix: { i: [0, 1] }",
  "    steps: [{ id: a, run: [sh, -c, 'true'], memory: numpy, timeout: 2m }]",
  "",
].join("\n");

/** What a user's shell may hold: each would change what gpuplan submitted or asked. */
const HOSTILE = {
  SBATCH_ARRAY_INX: "0",
  SBATCH_REQUEUE: "1",
  SBATCH_NO_REQUEUE: "1",
  SBATCH_OUTPUT: "/tmp/elsewhere.out",
  SBATCH_ERROR: "/tmp/elsewhere.err",
  SBATCH_WAIT: "1",
  SBATCH_JOB_NAME: "other",
  SBATCH_GRES: "gpu:8",
  SBATCH_GPUS: "8",
  SBATCH_TIMELIMIT: "1",
  SBATCH_MEM_PER_CPU: "1",
  SBATCH_CHDIR: "/tmp",
  SLURM_EXIT_ERROR: "0",
  SQUEUE_PARTITION: "other",
  SQUEUE_USERS: "nobody",
  SCANCEL_STATE: "PENDING",
  SCANCEL_INTERACTIVE: "1",
};

/** The script leaves these unsaid: the user's environment still sets them. */
const TUNABLE = { SBATCH_PARTITION: "debug", SBATCH_RESERVATION: "maint", SLURM_CONF: "/nonexistent" };

const run = (args: string[], env: Record<string, string> = {}) =>
  gpuplan(args, { cwd: dir, env: { PATH: `${fake}:${process.env.PATH}`, ...TUNABLE, ...env } });

/** Each call's command line and the Slurm variables it saw, as `NAME=VALUE` lines. */
function calls(): { call: string; env: string[] }[] {
  const file = join(fake, "calls");
  if (!existsSync(file)) return [];
  const out: { call: string; env: string[] }[] = [];
  for (const line of readFileSync(file, "utf8").split("\n")) {
    if (line.startsWith("CALL ")) out.push({ call: line.slice(5), env: [] });
    else if (line !== "") out.at(-1)?.env.push(line);
  }
  return out;
}

beforeAll(() => {
  mkdirSync(fake);
  for (const name of ["squeue", "sbatch", "sacct", "scancel"]) {
    const file = join(fake, name);
    writeFileSync(
      file,
      [
        "#!/bin/sh",
        'd=$(dirname "$0"); n=$(basename "$0")',
        'echo "CALL $n $*" >> "$d/calls"',
        "env | grep -E '^(SBATCH|SQUEUE|SACCT|SCANCEL|SLURM)_' | sort >> \"$d/calls\"",
        'cat "$d/$n.out" 2>/dev/null',
        "exit 0",
        "",
      ].join("\n"),
    );
    chmodSync(file, 0o755);
  }
  writeFileSync(join(fake, "sbatch.out"), "4242\n");
  writeFileSync(join(dir, "pipeline.yaml"), PIPELINE);
  writeFileSync(join(dir, "node.json"), JSON.stringify(NODE));
  expect(run(["compile", "pipeline.yaml", "--inventory", "node.json", "-o", "plan.json"]).exitCode).toBe(0);
});

const hostileNames = Object.keys(HOSTILE);
const seen = (env: string[]) => env.map((l) => l.split("=")[0]!);

describe("gpuplan run --executor slurm under a shell with SBATCH_ variables", () => {
  it("sbatch sees none that would override the script; those the script leaves unsaid reach it", () => {
    rmSync(join(fake, "calls"), { force: true });
    const r = run(["run", "plan.json", "--executor", "slurm", "--detach", "--json"], HOSTILE);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    const sbatch = calls().filter((c) => c.call.startsWith("sbatch"));
    expect(sbatch).toHaveLength(1);
    for (const name of hostileNames.filter((n) => !n.startsWith("SQUEUE_") && !n.startsWith("SCANCEL_")))
      expect(seen(sbatch[0]!.env)).not.toContain(name);
    expect(sbatch[0]!.env).toContain("SBATCH_PARTITION=debug");
    expect(sbatch[0]!.env).toContain("SBATCH_RESERVATION=maint");
    expect(sbatch[0]!.env).toContain("SLURM_CONF=/nonexistent");
  });

  it("a partition the script says (--partition) is not overridden by SBATCH_PARTITION", () => {
    rmSync(join(fake, "calls"), { force: true });
    const r = run(["run", "plan.json", "--executor", "slurm", "--detach", "--partition", "gpu"]);
    expect(r.exitCode, r.stderr).toBe(0);
    const sbatch = calls().find((c) => c.call.startsWith("sbatch"))!;
    expect(seen(sbatch.env)).not.toContain("SBATCH_PARTITION");
    expect(sbatch.env).toContain("SBATCH_RESERVATION=maint");
  });

  it("an abbreviated --sbatch-arg (--part=gpu, as sbatch reads it: --partition) is not overridden by SBATCH_PARTITION", () => {
    rmSync(join(fake, "calls"), { force: true });
    const r = run([
      "run",
      "plan.json",
      "--executor",
      "slurm",
      "--detach",
      "--sbatch-arg=--part=gpu",
      "--sbatch-arg=--res=maint2",
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    const sbatch = calls().find((c) => c.call.startsWith("sbatch"))!;
    expect(seen(sbatch.env)).not.toContain("SBATCH_PARTITION");
    expect(seen(sbatch.env)).not.toContain("SBATCH_RESERVATION");
  });

  it("status: squeue sees no SQUEUE_ filter (it would leave the run's tasks out of the answer)", () => {
    const r = run(["run", "plan.json", "--executor", "slurm", "--detach", "--json"]);
    const id = JSON.parse(r.stdout).run as string;
    writeFileSync(
      join(fake, "squeue.out"),
      "4242_0|RUNNING|None|node3|0|4243|\n4242_1|RUNNING|None|node3|0|4244|\n",
    );
    rmSync(join(fake, "calls"), { force: true });
    const status = run(["status", id, "--json"], HOSTILE);
    expect(status.exitCode, status.stderr).toBe(0);
    const squeue = calls().filter((c) => c.call.startsWith("squeue"));
    expect(squeue.length).toBeGreaterThan(0);
    for (const c of squeue)
      expect(seen(c.env).filter((n) => n.startsWith("SQUEUE_") || n === "SLURM_EXIT_ERROR")).toEqual([]);
    rmSync(join(fake, "squeue.out"));
  });

  it.each(["SBATCH_CLUSTERS", "SLURM_CLUSTERS"])(
    "%s naming another cluster is refused before anything is submitted, by run and by an exported submit.sh",
    (name) => {
      // The arrays would run where squeue, sacct and scancel (as gpuplan calls them) do not look:
      // every task read as unknown, and Ctrl-C cancelled nothing.
      rmSync(join(fake, "calls"), { force: true });
      const r = run(["run", "plan.json", "--executor", "slurm", "--detach"], { [name]: "c2" });
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`${name}=c2 would send the job arrays to another cluster`);
      expect(r.stderr).toContain("[conflicting-options]");
      expect(calls().filter((c) => c.call.startsWith("sbatch"))).toEqual([]);
      const e = run(["export", "plan.json", "--to", "slurm", "-o", `clusters-${name}`]);
      expect(e.exitCode, e.stderr).toBe(0);
      const submitted = spawnSync("bash", [join(dir, `clusters-${name}/submit.sh`)], {
        cwd: dir,
        env: { ...process.env, PATH: `${fake}:${process.env.PATH}`, [name]: "c2" },
        encoding: "utf8",
      });
      expect(submitted.status).toBe(2);
      expect(submitted.stderr).toContain("would send the arrays to another cluster");
      expect(calls().filter((c) => c.call.startsWith("sbatch"))).toEqual([]);
    },
  );

  it("scancel, as the follower runs it, sees no SCANCEL_ filter (it would spare some of the run's jobs)", async () => {
    rmSync(join(fake, "calls"), { force: true });
    const slurm = slurmCommandRunner(
      { ...process.env, PATH: `${fake}:${process.env.PATH}`, ...HOSTILE },
      10_000,
    );
    expect((await slurm("scancel", ["4242"])).status).toBe(0);
    const [scancel] = calls();
    expect(scancel?.call).toBe("scancel 4242");
    expect(seen(scancel!.env).filter((n) => n.startsWith("SCANCEL_") || n === "SLURM_EXIT_ERROR")).toEqual(
      [],
    );
  });
});

describe("gpuplan export's submit.sh under a shell with SBATCH_ variables", () => {
  it("unsets those that would override its scripts before sbatch; the rest reach sbatch", () => {
    const e = run(["export", "plan.json", "--to", "slurm", "-o", "out", "--inventory", "node.json"]);
    expect(e.exitCode, e.stderr).toBe(0);
    rmSync(join(fake, "calls"), { force: true });
    execFileSync("bash", [join(dir, "out/submit.sh")], {
      cwd: dir,
      env: { ...process.env, PATH: `${fake}:${process.env.PATH}`, ...TUNABLE, ...HOSTILE },
    });
    const sbatch = calls().filter((c) => c.call.startsWith("sbatch"));
    expect(sbatch).toHaveLength(1);
    const names = seen(sbatch[0]!.env);
    for (const name of ["SBATCH_ARRAY_INX", "SBATCH_OUTPUT", "SBATCH_ERROR", "SBATCH_WAIT", "SBATCH_GRES"])
      expect(names).not.toContain(name);
    expect(names).not.toContain("SLURM_EXIT_ERROR");
    expect(sbatch[0]!.env).toContain("SBATCH_PARTITION=debug");
  });
});

describe("sbatchOverrides", () => {
  it("names the variable of every directive, long or short (--sbatch-arg=-pgpu), before the first command", () => {
    const script = [
      "#!/bin/bash",
      "#SBATCH --array=0-3%2",
      "#SBATCH --mem=100M",
      "#SBATCH --time=00:10:00",
      "#SBATCH -pgpu",
      "#SBATCH -HJname",
      "#SBATCH --constraint=ib",
      "#SBATCH --no-requeue",
      "#SBATCH --lic=matlab",
      "#SBATCH --mem-p=1G",
      "#SBATCH --dep=afterok:1",
      "",
      "set -e",
      "#SBATCH --account=late",
    ].join("\n");
    const names = sbatchOverrides(script);
    for (const n of [
      "SBATCH_ARRAY_INX",
      "SBATCH_MEM_PER_NODE",
      "SBATCH_MEM_PER_CPU",
      "SBATCH_TIMELIMIT",
      "SBATCH_PARTITION",
      "SBATCH_JOB_NAME",
      "SBATCH_CONSTRAINT",
      "SBATCH_REQUEUE",
      "SBATCH_NO_REQUEUE",
      "SBATCH_WAIT",
      // Abbreviations, as sbatch's getopt_long reads them; --mem-p may be either (sbatch refuses it).
      "SBATCH_LICENSES",
      "SBATCH_DEPENDENCY",
      "SBATCH_MEM_PER_GPU",
    ])
      expect(names).toContain(n);
    // After the first command sbatch reads no directive.
    expect(names).not.toContain("SBATCH_ACCOUNT");
  });
});

describe("a site whose sbatch passes no environment (SBATCH_EXPORT=NONE)", () => {
  // An sbatch that runs each array task here at once, as Slurm would start it: in the script's
  // --chdir, with the arguments after the script, and under SBATCH_EXPORT=NONE with none of the
  // submitting shell's variables (only SLURM_* and a login PATH).
  const runs = join(dir, "fake-runs");
  const seenDir = join(dir, "seen");
  const SEEING = [
    "version: 1",
    "name: seeing",
    "pipelines:",
    "  - name: p{i}",
    "    matrix: { i: [0, 1] }",
    `    steps: [{ id: a, run: [sh, -c, 'env | grep ^GPUPLAN_ | sort > ${seenDir}/p{i}'], memory: numpy, timeout: 2m }]`,
    "",
  ].join("\n");

  beforeAll(() => {
    mkdirSync(runs);
    for (const name of ["squeue", "sacct", "scancel"])
      writeFileSync(join(runs, name), readFileSync(join(fake, name)), { mode: 0o755 });
    writeFileSync(
      join(runs, "sbatch"),
      [
        "#!/bin/bash",
        "script=; args=()",
        'for a in "$@"; do if [ -z "$script" ]; then case "$a" in -*) ;; *) script=$a ;; esac; else args+=("$a"); fi; done',
        'script=$(realpath "$script")',
        "last=$(sed -n 's/^#SBATCH --array=0-\\([0-9]*\\).*/\\1/p' \"$script\")",
        'cd "$(sed -n \'s/^#SBATCH --chdir=//p\' "$script")"',
        'for i in $(seq 0 "$last"); do',
        '  if [ "${SBATCH_EXPORT:-ALL}" = NONE ]; then',
        '    env -i PATH=/usr/local/bin:/usr/bin:/bin HOME="$HOME" SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=$i bash "$script" "${args[@]}" >/dev/null 2>&1',
        "  else",
        '    SLURM_ARRAY_JOB_ID=4242 SLURM_ARRAY_TASK_ID=$i bash "$script" "${args[@]}" >/dev/null 2>&1',
        "  fi",
        "done",
        "echo 4242",
        "",
      ].join("\n"),
      { mode: 0o755 },
    );
    writeFileSync(join(dir, "seeing.yaml"), SEEING);
    const c = run(["compile", "seeing.yaml", "--target", "cpu-only", "-o", "seeing.json"]);
    expect(c.exitCode, c.stderr).toBe(0);
  });

  const NONE = { SBATCH_EXPORT: "NONE", GPUPLAN_KILL_GRACE: "7s", GPUPLAN_SPAWN: "node" };
  const seenBy = (pipeline: string) => readFileSync(join(seenDir, pipeline), "utf8").split("\n");

  it("run --executor slurm: every task still gets gpuplan's settings (GPUPLAN_*)", () => {
    rmSync(seenDir, { recursive: true, force: true });
    mkdirSync(seenDir);
    const r = gpuplan(["run", "seeing.json", "--executor", "slurm", "--detach"], {
      cwd: dir,
      env: { PATH: `${runs}:${process.env.PATH}`, ...NONE, OTHER_SETTING: "x" },
    });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    for (const p of ["p0", "p1"]) {
      expect(seenBy(p)).toContain("GPUPLAN_KILL_GRACE=7s");
      expect(seenBy(p)).toContain("GPUPLAN_SPAWN=node");
    }
  });

  it("--dry-run shows them on the sbatch line, as they are passed", () => {
    const r = gpuplan(["run", "seeing.json", "--executor", "slurm", "--dry-run"], {
      cwd: dir,
      env: { PATH: `${runs}:${process.env.PATH}`, ...NONE, GPUPLAN_LOCK_DIR: "/tmp/a b" },
    });
    expect(r.exitCode, r.stderr).toBe(0);
    const line = r.stdout.split("\n").find((l) => l.startsWith("$ sbatch --parsable "));
    expect(line, r.stdout).toMatch(/\/01-cpu\.sbatch /);
    for (const arg of ["GPUPLAN_KILL_GRACE=7s", "'GPUPLAN_LOCK_DIR=/tmp/a b'", "GPUPLAN_SPAWN=node"])
      expect(line!.split(".sbatch ")[1]!.split(/ (?=GPUPLAN_|')/)).toContain(arg);
  });

  it("an exported submit.sh: every task gets gpuplan's settings and the submission's token", () => {
    rmSync(seenDir, { recursive: true, force: true });
    mkdirSync(seenDir);
    const e = run(["export", "seeing.json", "--to", "slurm", "-o", "seeing-out"]);
    expect(e.exitCode, e.stderr).toBe(0);
    execFileSync("bash", [join(dir, "seeing-out/submit.sh")], {
      cwd: dir,
      env: { ...process.env, PATH: `${runs}:${process.env.PATH}`, ...NONE },
    });
    for (const p of ["p0", "p1"]) {
      expect(seenBy(p)).toContain("GPUPLAN_KILL_GRACE=7s");
      expect(seenBy(p).some((l) => l.startsWith("GPUPLAN_SUBMISSION="))).toBe(true);
    }
    const owner = readFileSync(join(dir, ".gpuplan/runs/slurm-4242/slurm/owner"), "utf8");
    expect(owner).toMatch(/^[0-9a-f]+\/[0-9]{8}T[0-9]{6}Z-/);
  });
});
