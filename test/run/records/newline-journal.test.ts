// A journal of 150 MB of newlines after its entries (damaged, or written so on purpose): reading
// it split the text into one array of every line, past what V8 allows, and `gpuplan runs` and
// `run --resume` died of a fatal V8 error with a native stack (exit 133).
import { appendFileSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { gpuplan, hasCrashed, tempDir } from "../../helpers/cli.js";

const t = tempDir();
afterAll(() => t.cleanup());

describe("a journal with 150 million empty lines", () => {
  it("is read line by line: runs lists the run, --resume finds it complete", { timeout: 120_000 }, () => {
    writeFileSync(
      join(t.dir, "p.yaml"),
      'version: 1\nname: nl\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: ["true"], memory: numpy }\n',
    );
    expect(gpuplan(["run", "p.yaml"], { cwd: t.dir }).exitCode).toBe(0);
    const [run] = readdirSync(join(t.dir, ".gpuplan/runs"));
    appendFileSync(join(t.dir, ".gpuplan/runs", run!, "journal.jsonl"), Buffer.alloc(150e6, 10));

    const runs = gpuplan(["runs", "--json"], { cwd: t.dir, timeoutMs: 60_000 });
    expect(hasCrashed(runs), runs.stderr).toBe(false);
    expect(runs.exitCode, runs.stderr).toBe(0);
    expect(JSON.parse(runs.stdout).runs).toMatchObject([{ id: run, status: "ok" }]);

    const resumed = gpuplan(["run", "--resume", run!], { cwd: t.dir, timeoutMs: 60_000 });
    expect(hasCrashed(resumed), resumed.stderr).toBe(false);
    expect(resumed.exitCode, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain("1 ok, 0 failed");
  });
});
