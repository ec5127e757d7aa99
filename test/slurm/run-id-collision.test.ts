// A new Slurm run whose id another run took (two started in the same second: 24 random bits)
// draws another, as a local run does (test/run/records/run-dir.test.ts), and is submitted from
// a folder of its own: its scripts name that folder. It used to stop with 'cannot make the run
// folder …: it exists already' [unwritable-file] where a local run went on.
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { PreparedRun } from "../../src/run/prepare/prepare-run.js";
import { RUN_ID_PATTERN } from "../../src/run/prepare/run-id.js";
import type { OpenRunView } from "../../src/run/run-view.js";
import { slurmExportOptions } from "../../src/slurm/executor-settings.js";
import { planSubmission, runOnSlurm } from "../../src/slurm/follow/slurm-session.js";
import type { CommandOutput } from "../../src/slurm/read-cluster.js";
import { compileText, inventory } from "../helpers/inventory.js";

const dir = mkdtempSync(join(tmpdir(), "gpuplan-slurm-run-id-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const PIPELINE =
  'version: 1\npipelines:\n  - name: p\n    steps:\n      - id: a\n        run: ["true"]\n        memory: numpy\n';

describe("a new Slurm run whose id another run has", () => {
  it("draws another and is submitted from its own folder; the other run's stays as it was", async () => {
    const compiled = compileText(PIPELINE, inventory([]));
    if (!compiled.plan) throw new Error(JSON.stringify(compiled.problems));
    const plan = compiled.plan;
    const taken = "20261128T050800Z-000000";
    const other = join(dir, ".gpuplan/runs", taken);
    mkdirSync(join(other, "logs"), { recursive: true });
    writeFileSync(join(other, "plan.json"), "the other run's plan\n");
    writeFileSync(join(other, "journal.jsonl"), '{"type":"run"}\n');
    const prepared: PreparedRun = {
      plan,
      pipelines: plan.pipelines,
      baseDir: dir,
      runId: taken,
      runDir: other,
      completed: new Set(),
      attempts: new Map(),
      mayStillRun: [],
      resumed: false,
      bindings: [],
    };
    const submission = planSubmission(
      prepared,
      {
        planLabel: "plan.json",
        node: null,
        options: slurmExportOptions(undefined, {}),
        projectDir: dir,
        nodeBinary: "/usr/bin/node",
        gpuplanBinary: "/opt/gpuplan/bin/gpuplan.js",
        gpuplanVersion: "0.0.0-test",
      },
      new Set(),
    );
    const sbatched: string[] = [];
    const slurm = async (command: string, args: readonly string[]): Promise<CommandOutput> => {
      if (command === "sbatch") sbatched.push(args[1] ?? "");
      return { status: 0, stdout: command === "sbatch" ? "42\n" : "", stderr: "" };
    };
    const result = await runOnSlurm(prepared, submission, {
      input: "plan.json",
      openView: (() => {
        throw new Error("a detached run has no view");
      }) as unknown as OpenRunView,
      detach: true,
      requeue: false,
      slurm,
      signal: new AbortController().signal,
      sharedFolderTimeoutMs: 60_000,
    });
    expect(result.runId).not.toBe(taken);
    expect(result.runId).toMatch(RUN_ID_PATTERN);
    expect(result.runDir).toBe(join(dir, ".gpuplan/runs", result.runId));
    // Submitted from its own folder, whose scripts name it (not the other run's).
    expect(sbatched).toHaveLength(1);
    expect(sbatched[0]!.startsWith(join(result.runDir, "slurm/"))).toBe(true);
    const script = readFileSync(sbatched[0]!, "utf8");
    expect(script).toContain(result.runDir);
    expect(script).not.toContain(taken);
    expect(JSON.parse(readFileSync(join(result.runDir, "slurm/jobs.json"), "utf8"))).toMatchObject({
      arrays: [{ job: "42" }],
    });
    expect(
      JSON.parse(readFileSync(join(result.runDir, "journal.jsonl"), "utf8").split("\n")[0]!),
    ).toMatchObject({
      type: "run",
      run: result.runId,
    });
    expect(readFileSync(join(other, "plan.json"), "utf8")).toBe("the other run's plan\n");
    expect(readdirSync(other).sort()).toEqual(["journal.jsonl", "logs", "plan.json"]);
  });
});
