// `gpuplan run` on AMD GPUs, end to end through the fake ROCm SMI and HIP libraries (the koffi
// path): detect → compile → run, the plan verified against the live AMD inventory by UUID, and
// the step's own view of its GPU: ROCR_VISIBLE_DEVICES only (never HIP_VISIBLE_DEVICES too, even
// when gpuplan's caller set it), the framework memory settings, and its slot lock held by UUID.
import { mkdtempSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt, SCENARIOS } from "../detect/fake-libs.js";
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

  // A Radeon whose ROCm SMI has no unique id (consumer cards) had its steps run with
  // ROCR_VISIBLE_DEVICES=unknown-0000:05:00.0, which ROCr rejects: the step saw no GPU at all.
  describe("GPUs whose ROCm SMI gives no unique id", () => {
    const noUniqueIds = (): string => {
      const file = join(mkdtempSync(join(tmpdir(), "gpuplan-scenario-")), "no-unique-id.scenario");
      const text = readFileSync(join(SCENARIOS, "amd-mi300x.scenario"), "utf8");
      writeFileSync(
        file,
        text
          .split("\n")
          .filter((l) => !/^rsmi\.\d+\.unique_id/.test(l))
          .join("\n"),
      );
      return file;
    };
    const file = `version: 1
name: amd
pipelines:
  - name: seg
    steps:
      - id: s
        run: [sh, -c, "env | grep -E '^ROCR_VISIBLE_DEVICES=|^GPUPLAN_DEVICE='"]
        memory: torch
        vram: 8GiB
`;

    it("with HIP: the step is shown its GPU by HIP's index, the one ROCr's order uses", () => {
      const t = tempDir();
      try {
        const cwd = t.dir;
        const env = {
          ...fakeEnv("amd-mi300x.scenario", { rocmSmi: fakeLib("rocmSmi"), hip: fakeLib("hip") }),
          GPUPLAN_FAKE_SCENARIO: noUniqueIds(),
          GPUPLAN_LOCK_DIR: join(cwd, "locks"),
          CI: "1",
        };
        writeFileSync(join(cwd, "p.yaml"), file);
        const compiled = gpuplan(["compile", "p.yaml", "-o", "plan.json"], { cwd, env });
        expect(compiled.exitCode, compiled.stderr).toBe(0);
        expect(compiled.stderr).not.toContain("gpu-not-addressable");
        const plan = JSON.parse(readFileSync(join(cwd, "plan.json"), "utf8"));
        // PCI order 05, 83, c1; HIP lists 83, 05, c1.
        expect(
          plan.registry.map((r: { pciBusId: string; visibleAs: string }) => [r.pciBusId, r.visibleAs]),
        ).toEqual([
          ["0000:05:00.0", "1"],
          ["0000:83:00.0", "0"],
          ["0000:c1:00.0", "2"],
        ]);
        const ran = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd, env });
        expect(ran.exitCode, ran.stderr).toBe(0);
        const runs = join(cwd, ".gpuplan", "runs");
        const [run] = readdirSync(runs);
        const lines = readFileSync(join(runs, run!, "logs", "seg@s.out.log"), "utf8")
          .trim()
          .split("\n");
        const gpu = plan.registry.find((r: { gpu: string }) => r.gpu === plan.pipelines[0].gpu);
        expect(lines).toContain(`ROCR_VISIBLE_DEVICES=${gpu.visibleAs}`);
        expect(lines).toContain(`GPUPLAN_DEVICE=${gpu.gpu}`);
      } finally {
        t.cleanup();
      }
    }, 30_000);

    it("without HIP: compile leaves the GPUs out, and a run refuses to bind to them", () => {
      const t = tempDir();
      try {
        const cwd = t.dir;
        const withHip = {
          ...fakeEnv("amd-mi300x.scenario", { rocmSmi: fakeLib("rocmSmi"), hip: fakeLib("hip") }),
          GPUPLAN_FAKE_SCENARIO: noUniqueIds(),
          GPUPLAN_LOCK_DIR: join(cwd, "locks"),
          CI: "1",
        };
        const noHip = { ...withHip, GPUPLAN_HIP_LIBRARY: join(cwd, "no-libamdhip64.so") };
        writeFileSync(join(cwd, "p.yaml"), file);
        const compiled = gpuplan(["compile", "p.yaml", "-o", "cpu.json", "--json"], { cwd, env: noHip });
        // The one GPU step then has no GPU: an error, as on a machine without GPUs.
        expect(compiled.exitCode).toBe(1);
        const report = JSON.parse(compiled.stdout);
        const left = report.problems.filter((p: { code: string }) => p.code === "gpu-not-addressable");
        expect(left).toHaveLength(1);
        expect(left[0].severity).toBe("warning");
        expect(left[0].message).toMatch(
          /^rocm:0 \(AMD Instinct MI210, 0000:05:00\.0\), rocm:1 .*0000:83:00\.0\), rocm:2 .*0000:c1:00\.0\): .*ROCR_VISIBLE_DEVICES cannot name them/,
        );
        expect(report.problems.map((p: { code: string }) => p.code)).toContain("no-usable-gpu");

        // A plan made where HIP was installed, run where it is not.
        expect(gpuplan(["compile", "p.yaml", "-o", "plan.json"], { cwd, env: withHip }).exitCode).toBe(0);
        const ran = gpuplan(["run", "plan.json", "--ui", "plain"], { cwd, env: noHip });
        expect(ran.exitCode).not.toBe(0);
        expect(ran.stderr).toContain("[gpu-not-addressable]");
        expect(ran.stderr).toContain("ROCR_VISIBLE_DEVICES cannot name them");
        expect(ran.stderr).not.toMatch(/\n\s+at /);
      } finally {
        t.cleanup();
      }
    }, 60_000);
  });
});
