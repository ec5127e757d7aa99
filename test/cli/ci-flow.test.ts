/**
 * The CI flow of the README and docs/guides/portable-plans.md, end to end (#13 item 6): compile
 * against a target and commit the plan; CI checks it (`--check`, `--format github`) — against
 * several targets in one call, each plan against the target it records; then the same committed
 * plan runs, with no recompile, on fake NVML GPUs of the target's model.
 */
import { cpSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
import { gpuplan, hasCrashed, tempDir } from "../helpers/cli.js";

const PIPELINE = [
  "version: 1",
  "name: ci",
  "pipelines:",
  "  - name: shard-{n}",
  "    matrix: { n: [1, 2, 3, 4] }",
  "    steps:",
  "      - id: embed",
  "        run: [node, -e, \"console.log('on', process.env.CUDA_VISIBLE_DEVICES)\"]",
  "        memory: torch",
  "        vram: 12GiB",
  "",
].join("\n");

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

/** A repository: pipeline.yaml and plans/ compiled for two targets (what a developer commits). */
function repository(): string {
  const t = tempDir();
  cleanups.push(t.cleanup);
  // No plans/ yet: compile -o makes it, as the README's flow expects.
  mkdirSync(join(t.dir, "repo"));
  writeFileSync(join(t.dir, "repo/pipeline.yaml"), PIPELINE);
  for (const target of ["dgx-h100", "l4-x4"]) {
    const r = gpuplan(["compile", "pipeline.yaml", "--target", target, "-o", `plans/${target}.json`], {
      cwd: join(t.dir, "repo"),
    });
    expect(r.exitCode, r.stderr).toBe(0);
  }
  return t.dir;
}

describe("the CI gate", () => {
  it("a checkout elsewhere checks the committed plans, each against its own target, in one call", () => {
    const dir = repository();
    // CI clones the repository somewhere else and runs from its root.
    cpSync(join(dir, "repo"), join(dir, "ci/checkout"), { recursive: true });
    const ci = join(dir, "ci/checkout");
    const r = gpuplan(
      [
        "compile",
        "pipeline.yaml",
        "--check",
        "plans/dgx-h100.json",
        "--check",
        "plans/l4-x4.json",
        "--format",
        "github",
      ],
      { cwd: ci },
    );
    expect(hasCrashed(r), r.stderr).toBe(false);
    expect(r.exitCode, r.stderr).toBe(0);
    expect(r.stdout).toBe("");
    expect(r.stderr).toContain(
      "plans/dgx-h100.json (target:dgx-h100), plans/l4-x4.json (target:l4-x4) are up to date",
    );
    const json = JSON.parse(
      gpuplan(
        [
          "compile",
          "pipeline.yaml",
          "--check",
          "plans/dgx-h100.json",
          "--check",
          "plans/l4-x4.json",
          "--json",
        ],
        {
          cwd: ci,
        },
      ).stdout,
    ) as { ok: boolean; checks: unknown[] };
    expect(json.ok).toBe(true);
    expect(json.checks).toEqual([
      { plan: "plans/dgx-h100.json", upToDate: true, inventory: "target:dgx-h100" },
      { plan: "plans/l4-x4.json", upToDate: true, inventory: "target:l4-x4" },
    ]);

    // A change to the pipeline without recompiling: one annotation per stale plan, with the fix.
    writeFileSync(join(ci, "pipeline.yaml"), PIPELINE.replace("vram: 12GiB", "vram: 10GiB"));
    const stale = gpuplan(
      [
        "compile",
        "pipeline.yaml",
        "--check",
        "plans/dgx-h100.json",
        "--check",
        "plans/l4-x4.json",
        "--format",
        "github",
      ],
      { cwd: ci },
    );
    expect(stale.exitCode).toBe(1);
    const annotations = stale.stdout.trim().split("\n");
    expect(annotations).toEqual([
      expect.stringMatching(
        /^::error file=plans\/dgx-h100\.json,title=gpuplan stale-plan::plans\/dgx-h100\.json is not what compile writes now: the pipeline file changed%0Ahint: run: gpuplan compile pipeline\.yaml --target dgx-h100 -o plans\/dgx-h100\.json$/,
      ),
      expect.stringMatching(
        /^::error file=plans\/l4-x4\.json,title=gpuplan stale-plan::.*--target l4-x4 -o plans\/l4-x4\.json$/,
      ),
    ]);
  });

  it.skipIf(!fakeLibsBuilt)(
    "the committed plan then runs on a machine of the target's kind with no recompile",
    () => {
      const dir = repository();
      cpSync(join(dir, "repo"), join(dir, "server/deploy"), { recursive: true });
      const scenario = join(dir, "h100.scenario");
      writeFileSync(
        scenario,
        `${readFileSync(join(SCENARIOS, "h100x8-mig.scenario"), "utf8")}\nnvml.2.mig = 0\nnvml.5.mig = 0\n`,
      );
      const env = fakeEnv(
        "h100x8-mig.scenario",
        { nvml: fakeLib("nvml") },
        {
          GPUPLAN_FAKE_SCENARIO: scenario,
          GPUPLAN_LOCK_DIR: join(dir, "locks"),
          CI: "1",
        },
      );
      const before = readFileSync(join(dir, "server/deploy/plans/dgx-h100.json"), "utf8");
      const r = gpuplan(["run", "deploy/plans/dgx-h100.json", "--ui", "plain"], {
        cwd: join(dir, "server"),
        env,
      });
      expect(hasCrashed(r), r.stderr).toBe(false);
      expect(r.exitCode, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/4 ok, 0 failed/);
      expect(r.stderr.match(/\] on GPU-[0-9a-f-]+/g)?.length).toBe(4);
      // Still the committed bytes: nothing was recompiled or rewritten.
      expect(readFileSync(join(dir, "server/deploy/plans/dgx-h100.json"), "utf8")).toBe(before);
      // The L4 plan does not run on H100s, and says why.
      const l4 = gpuplan(["run", "deploy/plans/l4-x4.json", "--dry-run"], { cwd: join(dir, "server"), env });
      expect(l4.exitCode).toBe(1);
      expect(l4.stderr).toMatch(
        /the plan needs 4 × NVIDIA L4 .*; this machine has none \(it has 8 × NVIDIA H100 80GB HBM3/,
      );
    },
  );
});
