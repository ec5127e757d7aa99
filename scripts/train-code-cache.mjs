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
    ];
    const bin = join(root, "bin/gpuplan.js");
    const train = `require(${JSON.stringify(join(root, "bin/code-cache.js"))})(true);
process.argv = [process.argv[0], ${JSON.stringify(bin)}, ...process.argv.slice(1)];
require(${JSON.stringify(bin)});`;
    for (const { args, exitCode = 0 } of commands) {
      const r = spawnSync(process.execPath, ["-e", train, "--", ...args], {
        cwd: dir,
        env,
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

if (process.argv[1] === fileURLToPath(import.meta.url)) trainCodeCache();
