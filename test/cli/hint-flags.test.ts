/**
 * #11.12: a hint names only flags that exist on the command that printed it (`run` has no
 * `--target`), or says which command has them; a CPU-only pipeline file (the Quick start's)
 * compiles with no `no-gpus` warning and passes --strict.
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { fakeEnv } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
// Detection finds no GPU: every vendor library is missing.
const NO_GPUS = { ...fakeEnv("h100x8-mig.scenario", {}), NO_COLOR: "1" };

const flagsOf = new Map<string, Set<string>>();
function flags(command: string): Set<string> {
  let set = flagsOf.get(command);
  if (!set) {
    const help = gpuplan([command, "--help"]).stdout;
    set = new Set([...help.matchAll(/(?:^|\s)(--[a-z][a-z-]*)/g)].map((m) => m[1]!));
    flagsOf.set(command, set);
  }
  return set;
}

/** Every `--flag` a hint names that the command it is attributed to does not have. */
function strayFlags(output: string, printedBy: string): string[] {
  const stray: string[] = [];
  for (const [, hint] of output.matchAll(/^\s*hint: (.*)$/gm)) {
    // Flags belong to the printing command until the hint names another ("gpuplan compile …").
    let command = printedBy;
    for (const token of hint!.split(/\s+/)) {
      const named = /^gpuplan$/.test(token) ? "next" : undefined;
      if (named) {
        command = "";
        continue;
      }
      if (command === "") {
        command = token.replace(/[^a-z-]/g, "");
        continue;
      }
      const flag = /^\(?(--[a-z][a-z-]*)/.exec(token)?.[1];
      if (flag && !flags(command).has(flag)) stray.push(`${flag} (${command}) in: ${hint}`);
    }
  }
  return stray;
}

const GPU_PIPELINE = `version: 1
pipelines:
  - name: p
    steps:
      - { id: seg, run: [python3, seg.py], memory: torch, vram: 4GiB }
`;

describe("hints name real flags", () => {
  it("run of a GPU pipeline on a machine without GPUs", () => {
    const file = join(tmp.dir, "gpu.yaml");
    writeFileSync(file, GPU_PIPELINE);
    const r = gpuplan(["run", file, "--dry-run"], { env: NO_GPUS });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.stderr).toMatch(/hint:/);
    expect(strayFlags(r.stderr, "run")).toEqual([]);
  });

  it("compile of a GPU pipeline against no GPUs", () => {
    const file = join(tmp.dir, "gpu2.yaml");
    writeFileSync(file, GPU_PIPELINE);
    for (const args of [["--target", "cpu-only"], []]) {
      const r = gpuplan(["compile", file, ...args], { env: NO_GPUS });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.stderr).toMatch(/hint:/);
      expect(strayFlags(r.stderr, "compile")).toEqual([]);
    }
  });

  it("the checker itself finds a flag the command lacks (control)", () => {
    expect(strayFlags("  hint: use --target NAME", "run")).toHaveLength(1);
    expect(strayFlags("  hint: gpuplan compile --target NAME", "run")).toEqual([]);
  });
});

describe("a CPU-only pipeline file", () => {
  it("compiles with no no-gpus warning and passes --strict", () => {
    const r = gpuplan([
      "compile",
      "examples/hello-cpu.yaml",
      "--target",
      "cpu-only",
      "--strict",
      "-o",
      join(tmp.dir, "p.json"),
    ]);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).not.toMatch(/no-gpus/);
    expect(r.stderr).toMatch(/0 errors, 0 warnings/);
  });

  it("runs (dry) on a machine without GPUs with no no-gpus warning", () => {
    const r = gpuplan(["run", "examples/hello-cpu.yaml", "--dry-run"], { env: NO_GPUS });
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(`${r.stdout}${r.stderr}`).not.toMatch(/no-gpus|no GPUs in the inventory/);
  });

  it("a GPU pipeline against no GPUs still says so", () => {
    const file = join(tmp.dir, "gpu3.yaml");
    writeFileSync(file, GPU_PIPELINE);
    const r = gpuplan(["compile", file, "--target", "cpu-only", "--format", "json"]);
    expect(r.stdout).toMatch(/"no-gpus"|"no-usable-gpu"/);
  });
});
