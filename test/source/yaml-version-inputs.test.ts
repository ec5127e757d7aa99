/**
 * Every YAML file gpuplan reads, not only the pipeline file, is read as YAML 1.2 whatever its
 * `%YAML` directive says: an inventory (`compile --inventory`, a custom target, `export
 * --inventory`) and a plan written as YAML. The loaders of those files dropped the parser's
 * warnings, so a `%YAML 1.1` there said nothing; each now warns [yaml-version] at the directive
 * in that file, as compile does for the pipeline (exit 1 with --strict).
 */
import { mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

const tmp = tempDir();
afterAll(() => tmp.cleanup());
const dir = tmp.dir;
const run = (args: string[]) => gpuplan(args, { cwd: dir });

const PIPELINE = [
  "version: 1",
  "name: demo",
  "pipelines:",
  "  - name: p",
  "    steps: [{ id: a, run: [a], memory: torch, vram: 8GiB }]",
  "",
].join("\n");
const CPU_PIPELINE =
  "version: 1\nname: cpu\npipelines:\n  - name: p\n    steps: [{ id: a, run: [node, -e, '0'], memory: numpy }]\n";
const INVENTORY = [
  "gpus:",
  "  - { name: NVIDIA H100 80GB HBM3, memory: 80GiB, count: 2 }",
  "cpu: { threads: 16, memory: 64GiB }",
  "",
].join("\n");
const OLD = "the file says it is YAML 1.1, but gpuplan reads YAML 1.2";

writeFileSync(join(dir, "pipeline.yaml"), PIPELINE);
writeFileSync(join(dir, "cpu.yaml"), CPU_PIPELINE);
writeFileSync(join(dir, "node.yaml"), `# a node\n%YAML 1.1\n---\n${INVENTORY}`);
mkdirSync(join(dir, ".gpuplan/targets"), { recursive: true });
writeFileSync(join(dir, ".gpuplan/targets/old-node.yaml"), `%YAML 1.1\n---\n${INVENTORY}`);

describe("%YAML 1.1 in files other than the pipeline file", () => {
  it("compile --inventory: a warning at the directive in the inventory file; exit 1 with --strict", () => {
    const r = run(["compile", "pipeline.yaml", "--inventory", "node.yaml", "-o", "plan.json"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^node\.yaml:2:1 +warning +the file says it is YAML 1\.1, .*\[yaml-version\]$/m);
    expect(r.stderr).toContain("> 2 | %YAML 1.1");

    const json = run(["compile", "pipeline.yaml", "--inventory", "node.yaml", "--format", "json"]);
    const problems = (JSON.parse(json.stdout) as { problems: Record<string, unknown>[] }).problems;
    expect(problems).toEqual([
      expect.objectContaining({
        code: "yaml-version",
        severity: "warning",
        file: "node.yaml",
        line: 2,
        column: 1,
      }),
    ]);

    const strict = run(["compile", "pipeline.yaml", "--inventory", "node.yaml", "--strict"]);
    expect(strict.exitCode).toBe(1);
    expect(strict.stderr).toMatch(/^node\.yaml:2:1 +error +the file says it is YAML 1\.1/m);
  });

  it("a custom target: compile --target and `gpuplan targets` warn at its file", () => {
    const c = run(["compile", "pipeline.yaml", "--target", "old-node"]);
    expect(c.exitCode, c.stderr).toBe(0);
    expect(c.stderr).toMatch(/^\.gpuplan\/targets\/old-node\.yaml:1:1 +warning +.*\[yaml-version\]$/m);
    expect(run(["compile", "pipeline.yaml", "--target", "old-node", "--strict"]).exitCode).toBe(1);

    const list = run(["targets"]);
    expect(list.exitCode, list.stderr).toBe(0);
    expect(list.stdout).toContain("old-node");
    expect(list.stderr).toMatch(/^\.gpuplan\/targets\/old-node\.yaml:1:1 +warning +.*\[yaml-version\]$/m);
  });

  it("export --to slurm --inventory: a warning at the directive, the folder written", () => {
    expect(run(["compile", "pipeline.yaml", "--target", "dgx-h100", "-o", "dgx.json"]).exitCode).toBe(0);
    const r = run(["export", "dgx.json", "--to", "slurm", "-o", "out", "--inventory", "node.yaml"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/^node\.yaml:2:1 +warning +the file says it is YAML 1\.1, .*\[yaml-version\]$/m);
  });

  it("a plan written as YAML: run --dry-run and report warn at its directive", () => {
    expect(run(["compile", "cpu.yaml", "--target", "cpu-only", "-o", "cpu-plan.json"]).exitCode).toBe(0);
    const plan = readFileSync(join(dir, "cpu-plan.json"), "utf8");
    writeFileSync(join(dir, "cpu-plan.yaml"), `%YAML 1.1\n---\n${plan}`);
    const r = run(["run", "cpu-plan.yaml", "--dry-run"]);
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stderr).toMatch(
      /^cpu-plan\.yaml:1:1 +warning +the file says it is YAML 1\.1, .*\[yaml-version\]$/m,
    );
    expect(r.stderr.split(OLD)).toHaveLength(2);

    const report = run(["report", "cpu-plan.yaml", "-o", "cpu-plan.html"]);
    expect(report.exitCode, report.stderr).toBe(0);
    expect(report.stderr).toMatch(
      /^cpu-plan\.yaml:1:1 +warning +the file says it is YAML 1\.1, .*\[yaml-version\]$/m,
    );
  });
});
