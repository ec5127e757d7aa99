/**
 * Issue #13 items 4 and 5 through the built CLI: a plan's bytes do not depend on how the pipeline
 * path was typed or where gpuplan started (paths relative to the plan's folder), `--check` names
 * the real difference, and a plan run from another folder runs its steps where the pipeline file
 * meant; a missing working folder or program is said as such, by `--dry-run` before anything starts.
 */
import { execFileSync } from "node:child_process";
import { cpSync, existsSync, mkdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

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
/** A project folder: proj/cell-painting.yaml and an empty proj/plans/. */
function project(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  mkdirSync(join(t.dir, "proj/plans"), { recursive: true });
  cpSync(join(ROOT, "examples/cell-painting.yaml"), join(t.dir, "proj/cell-painting.yaml"));
  return t.dir;
}
const ok = (r: ReturnType<typeof gpuplan>) => {
  expect(hasCrashed(r), r.stderr).toBe(false);
  expect(r.exitCode, r.stderr).toBe(0);
  return r;
};

describe("plan bytes do not depend on path spelling or the current folder", () => {
  it("./a.yaml, a.yaml, an absolute path and another current folder write the same plan", () => {
    const dir = project();
    const target = ["--target", "dgx-h100"];
    ok(gpuplan(["compile", "./proj/cell-painting.yaml", ...target, "-o", "proj/plans/a.json"], { cwd: dir }));
    ok(gpuplan(["compile", "proj/cell-painting.yaml", ...target, "-o", "./proj/plans/b.json"], { cwd: dir }));
    ok(
      gpuplan(
        ["compile", join(dir, "proj/cell-painting.yaml"), ...target, "-o", join(dir, "proj/plans/c.json")],
        {
          cwd: ROOT,
        },
      ),
    );
    ok(
      gpuplan(["compile", "../cell-painting.yaml", ...target, "-o", "d.json"], {
        cwd: join(dir, "proj/plans"),
      }),
    );
    const a = readFileSync(join(dir, "proj/plans/a.json"), "utf8");
    for (const f of ["b", "c", "d"]) expect(readFileSync(join(dir, `proj/plans/${f}.json`), "utf8")).toBe(a);
    const plan = JSON.parse(a) as { source: { file: string }; pipelines: { source: string }[] };
    expect(plan.source.file).toBe("../cell-painting.yaml");
    // Its steps' sources follow from it (format 2 leaves them out).
    expect(plan.pipelines[0]!.source).toBe("../cell-painting.yaml#/pipelines/0");

    // --check compares like with like: another spelling from another folder is up to date.
    const check = gpuplan(["compile", "cell-painting.yaml", ...target, "--check", "plans/a.json"], {
      cwd: join(dir, "proj"),
    });
    ok(check);
    expect(check.stderr).toMatch(/plans\/a\.json is up to date/);
  });

  it("a plan on stdout redirected to a file is the plan -o writes there; on a pipe, paths are the pipeline's folder's", () => {
    const dir = project();
    ok(
      gpuplan(["compile", "proj/cell-painting.yaml", "--target", "dgx-h100", "-o", "proj/plans/o.json"], {
        cwd: dir,
      }),
    );
    execFileSync(
      "/bin/sh",
      [
        "-c",
        `"${process.execPath}" "${join(ROOT, "bin/gpuplan.js")}" compile proj/cell-painting.yaml --target dgx-h100 > proj/plans/r.json`,
      ],
      { cwd: dir, stdio: ["ignore", "ignore", "pipe"] },
    );
    expect(readFileSync(join(dir, "proj/plans/r.json"), "utf8")).toBe(
      readFileSync(join(dir, "proj/plans/o.json"), "utf8"),
    );
    const piped = ok(gpuplan(["compile", "proj/cell-painting.yaml", "--target", "dgx-h100"], { cwd: dir }));
    expect((JSON.parse(piped.stdout) as { source: { file: string } }).source.file).toBe("cell-painting.yaml");
  });
});

describe("paths through linked folders, and the warnings a plan keeps", () => {
  /** A GPU step without `vram`: compile warns (missing-vram), and the plan keeps the warning. */
  const WARNS = [
    "version: 1",
    "name: warns",
    "pipelines:",
    "  - name: p",
    "    steps: [{ id: s, run: [python3, s.py], memory: torch }]",
    "",
  ].join("\n");

  it("a warning's file is the plan's path to it: ./w.yaml, w.yaml, absolute and another folder write the same bytes", () => {
    const dir = project();
    writeFileSync(join(dir, "proj/w.yaml"), WARNS);
    const target = ["--target", "rtx4090"];
    ok(gpuplan(["compile", "./proj/w.yaml", ...target, "-o", "proj/plans/a.json"], { cwd: dir }));
    ok(gpuplan(["compile", "proj/w.yaml", ...target, "-o", "proj/plans/b.json"], { cwd: dir }));
    ok(
      gpuplan(["compile", join(dir, "proj/w.yaml"), ...target, "-o", join(dir, "proj/plans/c.json")], {
        cwd: ROOT,
      }),
    );
    ok(gpuplan(["compile", "../w.yaml", ...target, "-o", "d.json"], { cwd: join(dir, "proj/plans") }));
    const a = readFileSync(join(dir, "proj/plans/a.json"), "utf8");
    for (const f of ["b", "c", "d"])
      expect(readFileSync(join(dir, `proj/plans/${f}.json`), "utf8"), f).toBe(a);
    const plan = JSON.parse(a) as { diagnostics: { code: string; file: string }[] };
    expect(plan.diagnostics).toEqual([expect.objectContaining({ code: "missing-vram", file: "../w.yaml" })]);

    // A plan whose warning was located as typed (gpuplan before): said so, never "by hand".
    const typed = a.replace(/"file": "\.\.\/w\.yaml"(,\s*"line")/, '"file": "proj/w.yaml"$1');
    expect(typed).not.toBe(a);
    writeFileSync(join(dir, "proj/plans/a.json"), typed);
    const r = gpuplan(["compile", "proj/w.yaml", ...target, "--check", "proj/plans/a.json"], { cwd: dir });
    expect(r.exitCode, r.stderr).toBe(1);
    expect(r.stderr).toMatch(/its warnings are not located as compile locates them now/);
    expect(r.stderr).not.toMatch(/by hand/);
  });

  it("a folder named through a link is its real folder: -o, > and the pipeline's path give the plan the real paths give", () => {
    const dir = project();
    symlinkSync(join(dir, "proj"), join(dir, "linked"));
    const target = ["--target", "dgx-h100"];
    ok(gpuplan(["compile", "proj/cell-painting.yaml", ...target, "-o", "proj/plans/a.json"], { cwd: dir }));
    ok(
      gpuplan(["compile", join(dir, "linked/cell-painting.yaml"), ...target, "-o", "proj/plans/b.json"], {
        cwd: dir,
      }),
    );
    ok(gpuplan(["compile", "proj/cell-painting.yaml", ...target, "-o", "linked/plans/c.json"], { cwd: dir }));
    execFileSync(
      "/bin/sh",
      [
        "-c",
        `"${process.execPath}" "${join(ROOT, "bin/gpuplan.js")}" compile "${join(dir, "linked/cell-painting.yaml")}" --target dgx-h100 > proj/plans/d.json`,
      ],
      { cwd: dir, stdio: ["ignore", "ignore", "pipe"] },
    );
    const a = readFileSync(join(dir, "proj/plans/a.json"), "utf8");
    for (const f of ["b", "c", "d"])
      expect(readFileSync(join(dir, `proj/plans/${f}.json`), "utf8"), f).toBe(a);
    expect((JSON.parse(a) as { source: { file: string } }).source.file).toBe("../cell-painting.yaml");
  });

  it("--check reads the inventory a plan records from the plan's real folder, as run does", () => {
    const dir = project();
    writeFileSync(
      join(dir, "proj/inv.yaml"),
      "gpus: [{ name: NVIDIA A100-SXM4-80GB, memory: 80GiB, count: 2 }]\ncpu: { threads: 8 }\n",
    );
    ok(
      gpuplan(
        ["compile", "proj/cell-painting.yaml", "--inventory", "proj/inv.yaml", "-o", "proj/plans/p.json"],
        { cwd: dir },
      ),
    );
    // other/deep/plans -> proj/plans: the plan's file:../inv.yaml is proj/inv.yaml, not other/deep/inv.yaml.
    mkdirSync(join(dir, "other/deep"), { recursive: true });
    symlinkSync(join(dir, "proj/plans"), join(dir, "other/deep/plans"));
    const check = ok(
      gpuplan(["compile", "proj/cell-painting.yaml", "--check", "other/deep/plans/p.json"], { cwd: dir }),
    );
    expect(check.stderr).toMatch(/other\/deep\/plans\/p\.json is up to date/);
  });

  it("run reads a plan's paths from its real folder: a plan reached through a linked folder finds its pipeline", () => {
    const dir = project();
    writeFileSync(
      join(dir, "proj/where.yaml"),
      "version: 1\nname: where\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: p\n    steps: [{ id: s, run: [node, -e, '0'] }]\n",
    );
    ok(gpuplan(["compile", "where.yaml", "-o", "plans/where.json"], { cwd: join(dir, "proj"), env: NO_GPU }));
    // other/deep/plans -> proj/plans: `..` from the link's spelling is other/deep, from the real folder proj.
    mkdirSync(join(dir, "other/deep"), { recursive: true });
    symlinkSync(join(dir, "proj/plans"), join(dir, "other/deep/plans"));
    const dry = ok(gpuplan(["run", "other/deep/plans/where.json", "--dry-run"], { cwd: dir, env: NO_GPU }));
    expect(dry.stdout).toContain(`cwd: ${join(dir, "proj")}\n`);
    expect(dry.stdout).not.toMatch(/problem:/);
  });
});

describe("an inventory's short form plans the same GPUs however its path is spelled", () => {
  const INVENTORY = "gpus: [{ name: NVIDIA A100-SXM4-80GB, memory: 80GiB, count: 2 }]\ncpu: { threads: 8 }\n";
  type Planned = { inventory: { label: string; fingerprint: string }; registry: { uuid: string }[] };

  it("inv.yaml, ./inv.yaml, an absolute path and a linked folder: one fingerprint, the same UUIDs, --check up to date", () => {
    const dir = project();
    writeFileSync(join(dir, "proj/inv.yaml"), INVENTORY);
    symlinkSync(join(dir, "proj"), join(dir, "linked"));
    const compileWith = (inventory: string, out: string) => {
      ok(gpuplan(["compile", "proj/cell-painting.yaml", "--inventory", inventory, "-o", out], { cwd: dir }));
      return JSON.parse(readFileSync(join(dir, out), "utf8")) as Planned;
    };
    const plain = compileWith("proj/inv.yaml", "proj/plans/a.json");
    for (const [i, spelling] of [
      "./proj/inv.yaml",
      join(dir, "proj/inv.yaml"),
      "linked/inv.yaml",
    ].entries()) {
      const other = compileWith(spelling, `proj/plans/${i}.json`);
      expect(other.inventory.fingerprint, spelling).toBe(plain.inventory.fingerprint);
      expect(
        other.registry.map((g) => g.uuid),
        spelling,
      ).toEqual(plain.registry.map((g) => g.uuid));
    }
    const check = gpuplan(
      ["compile", "cell-painting.yaml", "--inventory", "./inv.yaml", "--check", "plans/a.json"],
      { cwd: join(dir, "proj") },
    );
    ok(check);
    expect(check.stderr).toMatch(/plans\/a\.json is up to date/);
  });
});

describe("--check names the real difference", () => {
  const stale = (dir: string, args: string[] = []) => {
    const r = gpuplan(
      ["compile", "proj/cell-painting.yaml", "--target", "dgx-h100", "--check", "proj/plans/p.json", ...args],
      { cwd: dir },
    );
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toMatch(/stale-plan/);
    return r.stderr;
  };
  const compileTo = (dir: string, out: string, target = "dgx-h100") =>
    ok(gpuplan(["compile", "proj/cell-painting.yaml", "--target", target, "-o", out], { cwd: dir }));

  it("a plan moved away from its pipeline: the path, never a hand edit", () => {
    const dir = project();
    compileTo(dir, "elsewhere.json");
    cpSync(join(dir, "elsewhere.json"), join(dir, "proj/plans/p.json"));
    const err = stale(dir);
    expect(err).toMatch(
      /records the pipeline as proj\/cell-painting\.yaml, this compile as \.\.\/cell-painting\.yaml/,
    );
    expect(err).not.toMatch(/by hand/);
  });

  it("the pipeline, the inventory, the gpuplan version, or a hand edit", () => {
    const dir = project();
    const plan = join(dir, "proj/plans/p.json");
    compileTo(dir, "proj/plans/p.json", "dgx-a100-80gb");
    expect(stale(dir)).toMatch(/the inventory changed \(target:dgx-a100-80gb → target:dgx-h100\)/);

    compileTo(dir, "proj/plans/p.json");
    const good = readFileSync(plan, "utf8");
    writeFileSync(plan, good.replace(/"gpuplanVersion": "[^"]*"/, '"gpuplanVersion": "0.0.1"'));
    const version = stale(dir);
    expect(version).toMatch(/it was written by gpuplan 0\.0\.1/);
    expect(version).not.toMatch(/by hand/);

    writeFileSync(plan, good.replace('"estimateMs": ', '"estimateMs": 1'));
    expect(stale(dir)).toMatch(/edited by hand/);

    writeFileSync(plan, good);
    const pipeline = join(dir, "proj/cell-painting.yaml");
    writeFileSync(pipeline, `${readFileSync(pipeline, "utf8")}\n# a comment\n`);
    const changed = stale(dir);
    expect(changed).toMatch(/the pipeline file changed/);
    expect(changed).not.toMatch(/by hand/);
  });
});

describe("steps run where the pipeline file meant", () => {
  const PIPELINE = [
    "version: 1",
    "name: where",
    "registry: { platform_priority: [cpu] }",
    "pipelines:",
    "  - name: p",
    "    steps:",
    "      - { id: here, run: [node, -e, \"require('fs').writeFileSync('here.txt', process.cwd())\"] }",
    "      - { id: sub, run: [node, -e, \"require('fs').writeFileSync('sub.txt', process.cwd())\"], cwd: sub, needs: [here] }",
    "",
  ].join("\n");

  it("a plan run from another folder runs in the pipeline's folder (default and relative cwd)", () => {
    const dir = project();
    mkdirSync(join(dir, "proj/sub"));
    writeFileSync(join(dir, "proj/where.yaml"), PIPELINE);
    ok(gpuplan(["compile", "where.yaml", "-o", "plans/where.json"], { cwd: join(dir, "proj"), env: NO_GPU }));
    const other = join(dir, "other");
    mkdirSync(other);
    const dry = ok(gpuplan(["run", "../proj/plans/where.json", "--dry-run"], { cwd: other, env: NO_GPU }));
    expect(dry.stdout).toContain(`cwd: ${join(dir, "proj")}\n`);
    expect(dry.stdout).not.toMatch(/problem:/);
    ok(gpuplan(["run", "../proj/plans/where.json", "--ui", "plain"], { cwd: other, env: NO_GPU }));
    expect(readFileSync(join(dir, "proj/here.txt"), "utf8")).toBe(join(dir, "proj"));
    expect(readFileSync(join(dir, "proj/sub/sub.txt"), "utf8")).toBe(join(dir, "proj/sub"));
    expect(existsSync(join(other, "here.txt"))).toBe(false);
  });

  it("--dry-run reports a missing working folder and a program not on PATH by step (exit 1); run says the same, not ENOENT", () => {
    const dir = project();
    writeFileSync(
      join(dir, "proj/bad.yaml"),
      [
        "version: 1",
        "name: bad",
        "registry: { platform_priority: [cpu] }",
        "pipelines:",
        "  - name: p",
        "    steps:",
        "      - { id: nofolder, run: [node, -e, '0'], cwd: missing }",
        "  - name: q",
        "    steps:",
        "      - { id: noprogram, run: [no-such-program-gpuplan] }",
        "      - { id: fine, run: [node, -e, '0'] }",
        "",
      ].join("\n"),
    );
    ok(gpuplan(["compile", "proj/bad.yaml", "-o", "proj/plans/bad.json"], { cwd: dir, env: NO_GPU }));
    const dry = gpuplan(["run", "proj/plans/bad.json", "--dry-run"], { cwd: dir, env: NO_GPU });
    expect(hasCrashed(dry), dry.stderr).toBe(false);
    expect(dry.exitCode).toBe(1);
    expect(dry.stdout).toMatch(
      new RegExp(
        `nofolder \\(cpu\\)\\n(.*\\n)*?    problem: working folder ${join(dir, "proj/missing")} does not exist\\n`,
      ),
    );
    expect(dry.stdout).toMatch(
      /noprogram \(cpu\)\n(.*\n)*? {4}problem: program `no-such-program-gpuplan` not found on PATH/,
    );
    expect(dry.stdout).toMatch(/2 steps could not start here/);
    const json = gpuplan(["run", "proj/plans/bad.json", "--dry-run", "--ui", "json"], {
      cwd: dir,
      env: NO_GPU,
    });
    expect(json.exitCode).toBe(1);
    const steps = (
      JSON.parse(json.stdout) as { pipelines: { steps: { id: string; problems: string[] }[] }[] }
    ).pipelines.flatMap((p) => p.steps);
    expect(steps.map((s) => [s.id, s.problems.length])).toEqual([
      ["nofolder", 1],
      ["noprogram", 1],
      ["fine", 0],
    ]);

    const run = gpuplan(["run", "proj/plans/bad.json", "--ui", "plain"], { cwd: dir, env: NO_GPU });
    expect(hasCrashed(run), run.stderr).toBe(false);
    expect(run.exitCode).toBe(1);
    expect(run.stderr).toMatch(/working folder \S+proj\/missing does not exist/);
    expect(run.stderr).toMatch(/program `no-such-program-gpuplan` not found on PATH/);
    expect(run.stderr).not.toMatch(/ENOENT/);
  });
});
