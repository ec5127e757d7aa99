// Custom targets (#13 item 3): inventory files in .gpuplan/targets next to the pipeline (or
// --targets-dir) are listed by `gpuplan targets` and usable as `--target NAME`; one saved with
// `detect --save` on a machine gives a plan that binds to that kind of machine elsewhere.
import { spawnSync } from "node:child_process";
import { chmodSync, mkdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import validateTargets from "../../src/generated/targets-validator.js";
import type { GpuplanTargets } from "../../src/schema-types/targets.js";
import { fakeEnv, fakeLib, fakeLibsBuilt } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, ROOT, tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});
const canSwitchUser =
  process.getuid?.() === 0 &&
  spawnSync("runuser", ["-u", "nobody", "--", "test", "-r", join(ROOT, "bin/gpuplan.js")]).status === 0;
const PIPELINE =
  "version: 1\nname: t\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [node, -e, '0'], memory: torch, vram: 8GiB }\n";

function project(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  mkdirSync(join(t.dir, "proj/.gpuplan/targets"), { recursive: true });
  writeFileSync(join(t.dir, "proj/gpu.yaml"), PIPELINE);
  writeFileSync(
    join(t.dir, "proj/.gpuplan/targets/L4-Pair.yaml"),
    'gpus:\n  - { name: NVIDIA L4, memory: 23034MiB, count: 2, compute_capability: "8.9" }\ncpu: { threads: 32, memory: 128GiB }\n',
  );
  return t.dir;
}

describe("custom targets", () => {
  it("are listed after the built-in ones and compile as --target NAME, from the pipeline's folder or here", () => {
    const dir = project();
    const list = gpuplan(["targets"], { cwd: join(dir, "proj") });
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toMatch(/cpu-only .*\nl4-pair +2× NVIDIA L4 22\.5 GiB +32 threads\n$/);
    const json = JSON.parse(gpuplan(["targets", "--json"], { cwd: join(dir, "proj") }).stdout) as {
      targets: { name: string; description: string }[];
    };
    expect(json.targets.at(-1)).toMatchObject({
      name: "l4-pair",
      description: "custom: .gpuplan/targets/L4-Pair.yaml",
    });

    // From another folder: found next to the pipeline.
    const c = gpuplan(["compile", "proj/gpu.yaml", "--target", "l4-pair", "-o", "proj/plan.json"], {
      cwd: dir,
    });
    expect(c.exitCode, c.stderr).toBe(0);
    const plan = JSON.parse(readFileSync(join(dir, "proj/plan.json"), "utf8")) as {
      inventory: { label: string };
      registry: { name: string }[];
    };
    expect(plan.inventory.label).toBe("target:l4-pair");
    expect(plan.registry.map((r) => r.name)).toEqual(["NVIDIA L4", "NVIDIA L4"]);
  });

  it("--targets-dir names the folder; an unknown name suggests the custom ones too; a broken file is located and exits 1", () => {
    const dir = project();
    mkdirSync(join(dir, "shared"));
    writeFileSync(
      join(dir, "shared/big-node.yaml"),
      "gpus:\n  - { name: NVIDIA H200, memory: 143771MiB, count: 4 }\ncpu: { threads: 96 }\n",
    );
    const ok = gpuplan(["compile", "proj/gpu.yaml", "--target", "big-node", "--targets-dir", "shared"], {
      cwd: dir,
    });
    expect(ok.exitCode, ok.stderr).toBe(0);
    const unknown = gpuplan(["compile", "proj/gpu.yaml", "--target", "l4-pairs"], { cwd: dir });
    expect(unknown.exitCode).toBe(2);
    expect(unknown.stderr).toContain("did you mean `l4-pair`?");
    writeFileSync(join(dir, "proj/.gpuplan/targets/broken.yaml"), "gpus: 3\n");
    const list = gpuplan(["targets"], { cwd: join(dir, "proj") });
    expect(hasCrashed(list), list.stderr).toBe(false);
    expect(list.exitCode).toBe(1);
    expect(list.stdout).toContain("l4-pair");
    expect(list.stderr).toMatch(/^\.gpuplan\/targets\/broken\.yaml:1:7 +error +`gpus` must be array/m);
  });

  it("an unknown --target's hint offers only usable targets, and names the broken ones as such", () => {
    const dir = project();
    writeFileSync(join(dir, "proj/.gpuplan/targets/broken.yaml"), "gpus: 3\n");
    writeFileSync(join(dir, "proj/.gpuplan/targets/brokem.yaml"), "gpus: [\n");
    const r = gpuplan(["compile", "proj/gpu.yaml", "--target", "brokn"], { cwd: dir });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(2);
    const known = /known targets: ([^(]*) \(/.exec(r.stderr)?.[1]?.split(", ");
    expect(known, r.stderr).toContain("l4-pair");
    expect(known).not.toContain("broken");
    expect(known).not.toContain("brokem");
    expect(r.stderr).not.toContain("did you mean `broken`");
    expect(r.stderr).toContain("not usable until fixed: `brokem`, `broken` (gpuplan targets says why)");
  });

  it("--json carries a broken file's problems in the document, located, exits 1 and keeps stderr quiet", () => {
    const dir = project();
    writeFileSync(join(dir, "proj/.gpuplan/targets/broken.yaml"), "gpus: 3\n");
    const r = gpuplan(["targets", "--json"], { cwd: join(dir, "proj") });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode).toBe(1);
    expect(r.stderr).toBe("");
    const doc = JSON.parse(r.stdout) as GpuplanTargets;
    expect(validateTargets(doc), JSON.stringify(validateTargets.errors)).toBe(true);
    expect(doc.targets.map((t) => t.name)).toContain("l4-pair");
    expect(doc.targets.map((t) => t.name)).not.toContain("broken");
    expect(doc.problems).toContainEqual({
      code: "schema-wrong-type",
      severity: "error",
      message: "`gpus` must be array",
      file: ".gpuplan/targets/broken.yaml",
      line: 1,
      column: 7,
      pointer: "/gpus",
    });
    expect(doc.problems.every((p) => p.file === ".gpuplan/targets/broken.yaml")).toBe(true);
    const clean = JSON.parse(gpuplan(["targets", "--json"], { cwd: dir }).stdout) as GpuplanTargets;
    expect(clean.problems).toEqual([]);
  });

  it("a --targets-dir that is missing or not a folder is an error (exit 2), not a list without custom targets", () => {
    const dir = project();
    for (const [given, reason] of [
      ["shared/targts", "no such folder"],
      ["proj/gpu.yaml", "it is not a folder"],
    ]) {
      for (const args of [
        ["targets", "--targets-dir", given!],
        ["compile", "proj/gpu.yaml", "--target", "big-node", "--targets-dir", given!],
      ]) {
        const r = gpuplan(args, { cwd: dir });
        expect(hasCrashed(r), r.stderr).toBe(false);
        expect(r.exitCode, r.stderr).toBe(2);
        expect(r.stdout).toBe("");
        expect(r.stderr).toContain(
          `gpuplan: error: cannot read targets folder ${given}: ${reason}  [unreadable-file]`,
        );
      }
    }
  });

  it("a default targets folder gpuplan cannot read is an error for targets and a custom --target, not `unknown target`; a built-in --target does not read it", () => {
    const dir = project();
    const targets = join(dir, "proj/.gpuplan/targets");
    rmSync(targets, { recursive: true });
    symlinkSync("targets", targets); // A link to itself: ELOOP, whoever reads it.
    const reason = "cannot read targets folder .gpuplan/targets: too many symbolic links (a loop?)";
    for (const args of [["targets"], ["compile", "gpu.yaml", "--target", "l4-pair"]]) {
      const r = gpuplan(args, { cwd: join(dir, "proj") });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain(`gpuplan: error: ${reason}  [unreadable-file]\n  hint: `);
    }
    const builtIn = gpuplan(["compile", "gpu.yaml", "--target", "l4-x4"], { cwd: join(dir, "proj") });
    expect(builtIn.exitCode, builtIn.stderr).toBe(0);
  });

  it.skipIf(!canSwitchUser)(
    "a targets folder another user made, mode 0700: permission denied, not `unknown target`",
    () => {
      const dir = project();
      chmodSync(dir, 0o755);
      chmodSync(join(dir, "proj/.gpuplan/targets"), 0o700);
      const r = spawnSync(
        "runuser",
        [
          "-u",
          "nobody",
          "--",
          process.execPath,
          join(ROOT, "bin/gpuplan.js"),
          "compile",
          "gpu.yaml",
          "--target",
          "l4-pair",
        ],
        { cwd: join(dir, "proj"), encoding: "utf8", env: { ...process.env, NO_COLOR: "1" } },
      );
      expect(r.status, r.stderr).toBe(2);
      expect(r.stderr).toContain(
        "gpuplan: error: cannot read targets folder .gpuplan/targets: permission denied  [unreadable-file]",
      );
    },
  );

  it.skipIf(!fakeLibsBuilt)(
    "one saved with detect --save on a machine plans for that kind of machine and binds there by model",
    () => {
      const dir = project();
      const env = fakeEnv(
        "h100x8-mig.scenario",
        { nvml: fakeLib("nvml") },
        { GPUPLAN_LOCK_DIR: join(dir, "locks"), CI: "1" },
      );
      expect(
        gpuplan(["detect", "--save", "proj/.gpuplan/targets/lab-node.json"], { cwd: dir, env }).exitCode,
      ).toBe(0);
      const c = gpuplan(["compile", "proj/gpu.yaml", "--target", "lab-node", "-o", "proj/plan.json"], {
        cwd: dir,
      });
      expect(c.exitCode, c.stderr).toBe(0);
      // The device the plan uses here (the schedule may pick a full H100 or a MIG slice that fits).
      const here = gpuplan(["run", "proj/plan.json", "--dry-run", "--json"], { cwd: dir, env });
      expect(here.exitCode, here.stderr).toBe(0);
      const planned = (JSON.parse(here.stdout) as { bindings: { uuid: string }[] }).bindings[0]!.uuid;
      // Another device of the same model, standing for another machine of the kind.
      const sameModel: Record<string, string> = {
        "GPU-6513270e-269e-0d37-f2a7-4de452e6b438": "GPU-d23f0824-128b-2f33-0c5c-7fd0a6a3a450",
        "MIG-36f675cc-81e7-4ef5-e8e2-5d940ed90475": "MIG-0cb1e29c-658c-da14-95e6-0af593bd04cf",
      };
      const replacement = sameModel[planned];
      expect(replacement, `planned ${planned}`).toBeDefined();
      const other = fakeEnv(
        "h100x8-mig.scenario",
        { nvml: fakeLib("nvml") },
        {
          GPUPLAN_LOCK_DIR: join(dir, "locks"),
          CI: "1",
          CUDA_VISIBLE_DEVICES: replacement!,
        },
      );
      const r = gpuplan(["run", "proj/plan.json", "--dry-run", "--json"], { cwd: dir, env: other });
      expect(r.exitCode, r.stderr).toBe(0);
      const bindings = (JSON.parse(r.stdout) as { bindings: { uuid: string; replaced: boolean }[] }).bindings;
      expect(bindings).toEqual([expect.objectContaining({ uuid: replacement })]);
    },
  );

  it("two files of one folder whose names differ only in case or Unicode form are refused, naming both", () => {
    const dir = project();
    const targets = join(dir, "proj/.gpuplan/targets");
    const short = (name: string) => `gpus:\n  - { name: ${name}, memory: 80GiB }\n`;
    writeFileSync(join(targets, "ÉCOLE.yaml"), short("NVIDIA A100"));
    writeFileSync(join(targets, "e\u0301cole.yaml"), short("NVIDIA H100")); // decomposed, as macOS writes it
    for (const args of [["compile", "gpu.yaml", "--target", "école", "-o", "plan.json"], ["targets"]]) {
      const r = gpuplan(args, { cwd: join(dir, "proj") });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(2);
      expect(r.stderr).toContain("custom target `école` is ambiguous: ");
      expect(r.stderr).toContain("[ambiguous-target]");
      expect(r.stderr).toContain(".gpuplan/targets/ÉCOLE.yaml");
      expect(r.stderr).toContain(".gpuplan/targets/e\u0301cole.yaml");
    }
    // Another target of the folder is still usable.
    const other = gpuplan(["compile", "gpu.yaml", "--target", "l4-pair", "-o", "plan.json"], {
      cwd: join(dir, "proj"),
    });
    expect(other.exitCode, other.stderr).toBe(0);
  });

  it("a custom file with a built-in's name is listed marked as not used, in the table as in --json", () => {
    const dir = project();
    writeFileSync(
      join(dir, "proj/.gpuplan/targets/dgx-h100.yaml"),
      "gpus:\n  - { name: NVIDIA L4, memory: 23034MiB, count: 1 }\ncpu: { threads: 8 }\n",
    );
    const list = gpuplan(["targets"], { cwd: join(dir, "proj") });
    expect(list.exitCode, list.stderr).toBe(0);
    const rows = list.stdout.split("\n").filter((l) => l.startsWith("dgx-h100"));
    expect(rows).toHaveLength(2);
    expect(rows[0]).toMatch(/^dgx-h100 +8× NVIDIA H100/);
    expect(rows[1]).toMatch(
      /^dgx-h100 \(custom, not used: a built-in has this name\) +1× NVIDIA L4 22\.5 GiB +8 threads$/,
    );
    const json = JSON.parse(gpuplan(["targets", "--json"], { cwd: join(dir, "proj") }).stdout) as {
      targets: { name: string; description: string }[];
    };
    expect(json.targets.filter((t) => t.name === "dgx-h100").map((t) => t.description)).toEqual([
      expect.not.stringContaining("not used"),
      "custom: .gpuplan/targets/dgx-h100.yaml (not used: a built-in target has this name)",
    ]);
  });

  it("a plan saved into .gpuplan/targets, a pipeline file as --inventory, a later inventory format: each said once as what it is", () => {
    // A plan there gave 13 schema problems (missing `cpu`, `gpus`, unknown `name`…) and never said what it was.
    const dir = project();
    const proj = join(dir, "proj");
    expect(
      gpuplan(["compile", "gpu.yaml", "--target", "l4-pair", "-o", ".gpuplan/targets/plan.json"], {
        cwd: proj,
      }).exitCode,
    ).toBe(0);
    const list = gpuplan(["targets"], { cwd: proj });
    expect(hasCrashed(list), list.stderr).toBe(false);
    expect(list.exitCode).toBe(1);
    const problems = list.stderr.split("\n").filter((l) => /\s(error|warning)\s/.test(l));
    expect(problems).toEqual([
      expect.stringMatching(
        /^\.gpuplan\/targets\/plan\.json:2:13 +error +\.gpuplan\/targets\/plan\.json is a gpuplan file of another kind \(gpuplan\/plan@2\), not an inventory +\[not-an-inventory\]$/,
      ),
    ]);

    const asInventory = gpuplan(["compile", "gpu.yaml", "--inventory", "gpu.yaml"], { cwd: proj });
    expect(asInventory.exitCode).toBe(1);
    expect(asInventory.stderr).toContain(
      "gpu.yaml:1:1  error  gpu.yaml is a pipeline file, not an inventory  [not-an-inventory]",
    );
    expect(asInventory.stderr).not.toContain("schema-");

    writeFileSync(
      join(proj, "later.json"),
      JSON.stringify({ schema: "gpuplan/inventory@7", gpus: [], cpu: {} }),
    );
    const later = gpuplan(["compile", "gpu.yaml", "--inventory", "later.json"], { cwd: proj });
    expect(later.exitCode).toBe(1);
    expect(later.stderr).toMatch(
      /later\.json is an inventory in format gpuplan\/inventory@7, which this gpuplan \(\S+\) does not read: it reads gpuplan\/inventory@1 +\[not-an-inventory\]/,
    );
  });
});
