// Whether Slurm may requeue a run's task, from its array's sbatch script: `gpuplan runs` asks Slurm
// about a task that said it was interrupted only where it may have been requeued, so a run
// submitted without --requeue (its scripts say --no-requeue) is listed without a squeue.
import { mkdirSync, symlinkSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { mayRequeue, requeueDirective } from "../../src/slurm/follow/may-requeue.js";
import { tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const script = (...lines: string[]) =>
  ["#!/bin/bash", ...lines, "", "set -euo pipefail", "echo hi"].join("\n");

describe("requeueDirective", () => {
  it.each([
    ["--requeue", script("#SBATCH --array=0-1", "#SBATCH --requeue"), true],
    ["--no-requeue", script("#SBATCH --array=0-1", "#SBATCH --no-requeue"), false],
    ["neither (Slurm's default decides)", script("#SBATCH --array=0-1"), null],
    [
      "a later --sbatch-arg --requeue over gpuplan's --no-requeue",
      script("#SBATCH --no-requeue", "", "# --sbatch-arg, after the rest so they win:", "#SBATCH --requeue"),
      true,
    ],
    [
      "a directive after the first command (sbatch ignores it)",
      `${script("#SBATCH --no-requeue")}\n#SBATCH --requeue`,
      false,
    ],
    ["a directive commented out", script("##SBATCH --requeue", "#SBATCH --no-requeue"), false],
    // sbatch takes a unique abbreviation of a long option (getopt_long).
    ["--req (an --sbatch-arg abbreviating --requeue)", script("#SBATCH --no-requeue", "#SBATCH --req"), true],
    ["--no-r (abbreviating --no-requeue)", script("#SBATCH --requeue", "#SBATCH --no-r"), false],
    ["--re (ambiguous: reboot, requeue, reservation; sbatch refuses it)", script("#SBATCH --re"), null],
  ])("%s", (_, text, said) => {
    expect(requeueDirective(text)).toBe(said);
  });
});

describe("mayRequeue", () => {
  const runDir = () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    mkdirSync(join(t.dir, "slurm"));
    return t.dir;
  };

  it("reads the array's script in the run's slurm/ folder", async () => {
    const dir = runDir();
    writeFileSync(join(dir, "slurm/01-cpu.sbatch"), script("#SBATCH --no-requeue"));
    writeFileSync(join(dir, "slurm/02-gpu.sbatch"), script("#SBATCH --requeue"));
    expect(await mayRequeue(dir, "01-cpu.sbatch")).toBe(false);
    expect(await mayRequeue(dir, "02-gpu.sbatch")).toBe(true);
  });

  it("may, where the script cannot tell: missing, a link, a folder, a name that leaves slurm/", async () => {
    const dir = runDir();
    writeFileSync(join(dir, "no.sbatch"), script("#SBATCH --no-requeue"));
    symlinkSync(join(dir, "no.sbatch"), join(dir, "slurm/linked.sbatch"));
    mkdirSync(join(dir, "slurm/folder.sbatch"));
    expect(await mayRequeue(dir, "missing.sbatch")).toBe(true);
    expect(await mayRequeue(dir, "linked.sbatch")).toBe(true);
    expect(await mayRequeue(dir, "folder.sbatch")).toBe(true);
    expect(await mayRequeue(dir, "../no.sbatch")).toBe(true);
  });
});
