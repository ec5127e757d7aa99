/**
 * Commands gpuplan suggests are pasted into a shell: every word that comes from a path or a plan's
 * text is one shell word. A hand-edited plan whose source file reads `$(touch PWNED)` once printed
 * `gpuplan compile sub/$(touch PWNED)/gpu.yaml -o plans/evil.json`, which ran it when pasted; a
 * path with a space broke the command in two.
 */
import { copyFileSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { loadRunInput } from "../../src/run/prepare/load-run-input.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const PIPELINE = `version: 1
name: quoted
pipelines:
  - name: p{n}
    matrix: { n: [1, 2, 3, 4, 5, 6, 7, 8] }
    steps:
      - { id: infer, run: [node, -e, "0"], memory: torch, vram: 50GiB }
`;

/** A plan for 8 H100s in `plans/my plan.json`, its source file edited to `source`, its label to `label`. */
function editedPlan(source: string, label?: string): { dir: string; plan: string } {
  const t = tempDir();
  cleanups.push(t.cleanup);
  writeFileSync(join(t.dir, "gpu.yaml"), PIPELINE);
  mkdirSync(join(t.dir, "plans"));
  const plan = join("plans", "my plan.json");
  const c = gpuplan(["compile", "gpu.yaml", "--target", "dgx-h100", "-o", plan], { cwd: t.dir });
  expect(c.exitCode, c.stderr).toBe(0);
  const data = JSON.parse(readFileSync(join(t.dir, plan), "utf8"));
  data.source.file = source;
  if (label !== undefined) data.inventory.label = label;
  writeFileSync(join(t.dir, plan), JSON.stringify(data, null, 2));
  // The pipeline where the edited plan says it is, so only the words are odd.
  mkdirSync(join(t.dir, "plans", source, ".."), { recursive: true });
  copyFileSync(join(t.dir, "gpu.yaml"), join(t.dir, "plans", source));
  return { dir: t.dir, plan };
}

const EVIL = "../sub dir/$(touch PWNED)/gpu.yaml";

describe("suggested commands quote what comes from paths and plans", () => {
  it("recompile hints: the pipeline, the plan file and the --target label are single shell words", async () => {
    const { dir, plan } = editedPlan(EVIL, "target:dgx-h100; touch PWNED");
    // Read by its absolute path (the test's own cwd is the repository), which names the plan in -o.
    const file = join(dir, plan);
    const input = await loadRunInput(file, () => Promise.reject(new Error("no detect")), {
      verify: false,
      cwd: dir,
    });
    expect(input.recompile).toBe(
      `gpuplan compile 'sub dir/$(touch PWNED)/gpu.yaml' --target 'dgx-h100; touch PWNED' -o '${file}'`,
    );
    expect(input.recompileHere).toBe("gpuplan run 'sub dir/$(touch PWNED)/gpu.yaml'");
  });

  it.skipIf(!fakeLibsBuilt)(
    "run on a machine of another kind: the command that plans for it pastes as one command",
    () => {
      const { dir, plan } = editedPlan(EVIL);
      // Four of the plan's eight H100s: the run is refused with a hint to plan for this machine.
      const scenario = join(dir, "four.scenario");
      writeFileSync(
        scenario,
        `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.count = 4\n`,
      );
      const env = fakeEnv(
        "h100x8-mig.scenario",
        { nvml: fakeLib("nvml") },
        { GPUPLAN_FAKE_SCENARIO: scenario, GPUPLAN_LOCK_DIR: join(dir, "locks"), CI: "1" },
      );
      const r = gpuplan(["run", plan, "--ui", "plain"], { cwd: dir, env });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(1);
      expect(r.stderr).toContain("leaves the plan as it is: gpuplan run 'sub dir/$(touch PWNED)/gpu.yaml'");
    },
  );
});
