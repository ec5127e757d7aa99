#!/usr/bin/env node
// Writes dist/code-cache/ (bin/code-cache.js, docs/decisions/0014-build-time-code-cache.md): runs
// the commands whose start-up matters most, one after another, each reading the cache the ones
// before it wrote and writing it again with what it compiled itself. Hermetic: a temporary folder,
// no vendor library (every override names a missing file), its own lock folder, no colour.
// The last step of `npm run build` (scripts/bundle.mjs); a command that fails stops the build.
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { tmpdir } from "node:os";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export function trainCodeCache() {
  rmSync(join(root, "dist/code-cache"), { recursive: true, force: true });
  // Node's own compile cache, where there is one, is used instead (bin/gpuplan.js).
  if (typeof Module.enableCompileCache === "function") return;
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-code-cache-"));
  try {
    const missing = join(dir, "no-such-library.so");
    const env = {
      PATH: process.env.PATH ?? "/usr/bin:/bin",
      HOME: dir,
      CI: "1",
      NO_COLOR: "1",
      GPUPLAN_NVML_LIBRARY: missing,
      GPUPLAN_CUDA_LIBRARY: missing,
      GPUPLAN_ROCM_SMI_LIBRARY: missing,
      GPUPLAN_AMD_SMI_LIBRARY: missing,
      GPUPLAN_HIP_LIBRARY: missing,
      GPUPLAN_LOCK_DIR: join(dir, "locks"),
    };
    writeFileSync(
      join(dir, "one-step.yaml"),
      'version: 1\nname: train\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: ["true"], memory: numpy }\n',
    );
    // An error: the problem report's path (locating it in the file, the code frame).
    writeFileSync(
      join(dir, "problems.yaml"),
      "version: 1\nname: train\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [x], memory: nope }\n",
    );
    const commands = [
      {
        args: ["compile", join(root, "examples/cell-painting.yaml"), "--target", "dgx-h100", "-o", "a.json"],
      },
      { args: ["compile", "one-step.yaml", "--target", "cpu-only", "-o", "cpu.json"] },
      { args: ["compile", "problems.yaml", "--target", "cpu-only"], exitCode: 1 },
      { args: ["run", "cpu.json", "--dry-run"] },
      { args: ["run", "cpu.json", "--ui", "plain"] },
      { args: ["detect", "--json"] },
      { args: ["--help"] },
      // A GPU run (detection and the check against the machine, the slot lock, the memory
      // sampler): on one fake GPU, where a C compiler can build the fake NVML; without one, these
      // chunks are compiled from source at each run, as any chunk without a cache is.
      ...gpuCommands(dir),
    ];
    const bin = join(root, "bin/gpuplan.js");
    const train = `require(${JSON.stringify(join(root, "bin/code-cache.js"))})(true);
process.argv = [process.argv[0], ${JSON.stringify(bin)}, ...process.argv.slice(1)];
require(${JSON.stringify(bin)});`;
    for (const { args, exitCode = 0, extraEnv = {} } of commands) {
      const r = spawnSync(process.execPath, ["-e", train, "--", ...args], {
        cwd: dir,
        env: { ...env, ...extraEnv },
        encoding: "utf8",
      });
      if (r.status !== exitCode)
        throw new Error(
          `code cache: gpuplan ${args.join(" ")} exited ${r.status} (expected ${exitCode}): ${r.stderr}`,
        );
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * A one-step GPU pipeline compiled and run on one fake H100 (fixtures/fake-libs, built here with
 * cc into `dir`); none where there is no C compiler. Without these, a GPU run compiled its
 * detection, slot lock and memory sampler from source: a one-step GPU run took 104 ms, 95 ms with
 * these trained (paired, n=31: 0.935×).
 */
function gpuCommands(dir) {
  const nvml = join(dir, "libnvidia-ml.so.1");
  const src = join(root, "fixtures/fake-libs");
  const cc = spawnSync("cc", [
    "-shared",
    "-fPIC",
    "-O1",
    "-o",
    nvml,
    join(src, "fake-nvml.c"),
    join(src, "scenario.c"),
  ]);
  if (cc.status !== 0) return [];
  const scenario = join(dir, "gpu.scenario");
  writeFileSync(
    scenario,
    [
      "nvml.driver = 550.54.15",
      "nvml.version = 12.550.54.15",
      "nvml.cuda = 12040",
      "nvml.count = 1",
      "nvml.0.name = NVIDIA H100 80GB HBM3",
      "nvml.0.uuid = GPU-b0000000-0000-4000-8000-000000000001",
      "nvml.0.pci = 00000000:07:00.0",
      "nvml.0.memory = 85899345920",
      "nvml.0.used = 1073741824",
      "nvml.0.cc = 9.0",
      "nvml.0.processes =",
      "",
    ].join("\n"),
  );
  writeFileSync(
    join(dir, "gpu-step.yaml"),
    'version: 1\nname: train\npipelines:\n  - name: g\n    steps:\n      - { id: s, run: ["true"], memory: torch, vram: 1GiB }\n',
  );
  const extraEnv = {
    GPUPLAN_NVML_LIBRARY: nvml,
    GPUPLAN_FAKE_SCENARIO: scenario,
    GPUPLAN_SYSFS_ROOT: join(root, "fixtures/detect/sysfs-empty"),
  };
  return [
    { args: ["compile", "gpu-step.yaml", "-o", "gpu.json"], extraEnv },
    { args: ["run", "gpu.json", "--ui", "plain"], extraEnv },
  ];
}

if (process.argv[1] === fileURLToPath(import.meta.url)) trainCodeCache();
