// A file with thousands of problems (an inventory of 5,000 invalid GPUs, a pipeline file of 3,000
// mistakes) prints 50 code frames and a line counting the rest; JSON output keeps every one.
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { gpuplan, tempDir } from "../helpers/cli.js";

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

describe("thousands of problems", () => {
  it("compile shows 50 of an inventory's 5,000 in full, says how many more of which code, and --format json has all", () => {
    const t = tempDir();
    cleanup = t.cleanup;
    const gpus = Array.from({ length: 5000 }, (_, i) => `  - { name: G${i}, memory: lots }`).join("\n");
    writeFileSync(join(t.dir, "inv.yaml"), `gpus:\n${gpus}\ncpu: { threads: 8 }\n`);
    writeFileSync(
      join(t.dir, "p.yaml"),
      "version: 1\npipelines:\n  - name: p\n    steps: [{ id: s, run: [x] }]\n",
    );
    const human = gpuplan(["compile", "p.yaml", "--inventory", "inv.yaml", "-o", "plan.json"], {
      cwd: t.dir,
    });
    expect(human.exitCode, human.stderr.slice(0, 2000)).toBe(1);
    expect(human.stderr.split("\n").filter((l) => /^inv\.yaml:\d+:\d+ +error /.test(l))).toHaveLength(50);
    expect(human.stderr).toContain(
      "… 4,950 more not shown (4,950 errors): 4,950 schema-invalid-value; --format json lists them all\n",
    );
    expect(human.stderr).toMatch(/5000 errors, 0 warnings; no plan written\n$/);
    const json = gpuplan(["compile", "p.yaml", "--inventory", "inv.yaml", "--format", "json"], {
      cwd: t.dir,
    });
    expect(json.exitCode).toBe(1);
    expect((JSON.parse(json.stdout) as { problems: unknown[] }).problems).toHaveLength(5000);
  });
});
