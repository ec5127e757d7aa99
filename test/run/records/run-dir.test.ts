// A new run's folder is its own: two runs that drew the same id in the same second (24 random
// bits) never share one. The second used to write its plan.json over the first's (whose --resume
// was then refused as changed) and stop with a misleading run-in-use.
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createOwnRunDir, createRunDir, RunFolderTaken } from "../../../src/run/record/journal.js";
import { planFrom } from "../helpers/harness.js";

const plan = () =>
  planFrom(
    'version: 1\npipelines:\n  - name: p\n    steps:\n      - id: a\n        run: ["true"]\n        memory: numpy\n',
  );

let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-run-dir-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Another run's folder, as it is while that run runs. */
function takenFolder(id: string): string {
  const runDir = join(dir, ".gpuplan/runs", id);
  mkdirSync(join(runDir, "logs"), { recursive: true });
  writeFileSync(join(runDir, "plan.json"), "the other run's plan\n");
  writeFileSync(join(runDir, "journal.jsonl"), '{"type":"run"}\n');
  return runDir;
}

describe("a new run's folder", () => {
  it("is never made into an existing one: its plan and journal stay the other run's", async () => {
    const taken = takenFolder("20261128T050800Z-000000");
    await expect(createRunDir(taken, plan())).rejects.toBeInstanceOf(RunFolderTaken);
    await expect(createRunDir(taken, plan())).rejects.toMatchObject({
      code: "unwritable-file",
      message: expect.stringMatching(/run folder .*20261128T050800Z-000000: it exists already/),
    });
    expect(readFileSync(join(taken, "plan.json"), "utf8")).toBe("the other run's plan\n");
    expect(readFileSync(join(taken, "journal.jsonl"), "utf8")).toBe('{"type":"run"}\n');
  });

  it("draws its id again when another run has it, and gives up with the error after a few draws", async () => {
    const taken = takenFolder("20261128T050801Z-000000");
    const drawn = ["20261128T050801Z-000000", "20261128T050801Z-abcdef"];
    const own = await createOwnRunDir(
      "20261128T050801Z-000000",
      taken,
      plan(),
      undefined,
      () => drawn.shift()!,
    );
    expect(own.runId).toBe("20261128T050801Z-abcdef");
    expect(own.runDir).toBe(join(dir, ".gpuplan/runs/20261128T050801Z-abcdef"));
    expect(existsSync(join(own.runDir, "plan.json"))).toBe(true);
    expect(existsSync(join(own.runDir, "logs"))).toBe(true);
    expect(readFileSync(join(taken, "plan.json"), "utf8")).toBe("the other run's plan\n");

    let draws = 0;
    const always = () => {
      draws++;
      return "20261128T050801Z-000000";
    };
    await expect(
      createOwnRunDir("20261128T050801Z-000000", taken, plan(), undefined, always),
    ).rejects.toBeInstanceOf(RunFolderTaken);
    expect(draws).toBe(7);
  });
});
