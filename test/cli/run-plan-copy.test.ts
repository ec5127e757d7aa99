// A new run keeps the plan file it was given, byte for byte, as its run folder's plan.json when
// that file is a plan in the current format (compile wrote it: writing it anew would give the
// same bytes, at a cost that grows with the plan). The copy reads back like any plan.
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan } from "../helpers/cli.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("gpuplan run keeps the given plan as the run's copy", () => {
  it("the run folder's plan.json is the given file's bytes, and the run resumes from it", () => {
    dir = mkdtempSync(join(tmpdir(), "gpuplan-plan-copy-"));
    writeFileSync(
      join(dir, "p.yaml"),
      'version: 1\nname: copy\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: ["true"], memory: numpy }\n',
    );
    const compiled = gpuplan(["compile", "p.yaml", "--target", "cpu-only", "-o", "plan.json"], { cwd: dir });
    expect(compiled.exitCode, compiled.stderr).toBe(0);
    // The same plan laid out another way (a person's edit): still this format, so kept as given.
    const given = `${JSON.stringify(JSON.parse(readFileSync(join(dir, "plan.json"), "utf8")), null, 4)}\n`;
    writeFileSync(join(dir, "plan.json"), given);
    const run = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd: dir });
    expect(run.exitCode, run.stderr).toBe(0);
    const [id] = readdirSync(join(dir, ".gpuplan/runs"));
    expect(readFileSync(join(dir, ".gpuplan/runs", id!, "plan.json"), "utf8")).toBe(given);
    const resumed = gpuplan(["run", "--resume", id!, "--ui", "plain"], { cwd: dir });
    expect(resumed.exitCode, resumed.stderr).toBe(0);
  });
});
