// `gpuplan run` on AMD GPUs, end to end through the fake ROCm SMI and HIP libraries (the koffi
// path): detect → compile → run, the plan verified against the live AMD inventory by UUID, and
// the step's own view of its GPU: ROCR_VISIBLE_DEVICES only (never HIP_VISIBLE_DEVICES too, even
// when gpuplan's caller set it), the framework memory settings, and its slot lock held by UUID.
import { readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt } from "../detect/fake-libs.js";
import { gpuplan, tempDir } from "../helpers/cli.js";

describe.skipIf(!fakeLibsBuilt)("gpuplan run on AMD GPUs (fake ROCm SMI + HIP)", () => {
  it("a step sees its GPU through ROCR_VISIBLE_DEVICES alone, with its memory budget", () => {
    const t = tempDir();
    try {
      const cwd = t.dir;
      const env = {
        ...fakeEnv("amd-mi300x.scenario", { rocmSmi: fakeLib("rocmSmi"), hip: fakeLib("hip") }),
        GPUPLAN_LOCK_DIR: join(cwd, "locks"),
        CI: "1",
      };
      writeFileSync(
        join(cwd, "p.yaml"),
        `version: 1
name: amd
pipelines:
  - name: seg
    steps:
      - id: s
        run: [sh, -c, "env | grep -E '^(ROCR|HIP|CUDA)_VISIBLE_DEVICES=|^GPUPLAN_(DEVICE|MEMORY_BUDGET_BYTES)=|^PYTORCH_CUDA_ALLOC_CONF=' | sort; readlink /proc/$$/fd/3"]
        memory: torch
        vram: 8GiB
`,
      );
      const compiled = gpuplan(["compile", "p.yaml", "-o", "plan.json"], { cwd, env });
      expect(compiled.exitCode, compiled.stderr).toBe(0);
      const plan = JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8"));
      const gpu = plan.registry.find((r: { gpu: string }) => r.gpu === plan.pipelines[0].gpu);
      expect(gpu).toMatchObject({ backend: "rocm" });

      // The caller's HIP_VISIBLE_DEVICES must not reach the step alongside ROCR's.
      const ran = gpuplan(["run", "plan.json", "--ui", "plain"], {
        cwd,
        env: { ...env, HIP_VISIBLE_DEVICES: "0,1" },
      });
      expect(ran.exitCode, ran.stderr).toBe(0);
      const runs = join(cwd, ".gpuplan", "runs");
      const [run] = readdirSync(runs);
      const lines = readFileSync(join(runs, run!, "logs", "seg@s.out.log"), "utf8")
        .trim()
        .split("\n");
      expect(lines).toContain(`ROCR_VISIBLE_DEVICES=${gpu.uuid}`);
      expect(lines).toContain(`GPUPLAN_DEVICE=${gpu.gpu}`);
      expect(lines).toContain("PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True");
      expect(lines.some((l) => l.startsWith("GPUPLAN_MEMORY_BUDGET_BYTES="))).toBe(true);
      expect(lines.some((l) => l.startsWith("HIP_VISIBLE_DEVICES="))).toBe(false);
      // fd 3 is the GPU's slot lock file, named by the AMD UUID.
      expect(lines.at(-1)).toBe(join(cwd, "locks", `${gpu.uuid}.gpu.lock`));
    } finally {
      t.cleanup();
    }
  }, 30_000);
});
