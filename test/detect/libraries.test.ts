import { execFileSync } from "node:child_process";
import { mkdirSync, mkdtempSync, symlinkSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { findLibraries, searchDirectories } from "../../src/detect/libraries.js";

function tree(files: Record<string, string>): string {
  const root = mkdtempSync(join(tmpdir(), "gpuplan-libs-"));
  for (const [path, text] of Object.entries(files)) {
    mkdirSync(join(root, path, ".."), { recursive: true });
    writeFileSync(join(root, path), text);
  }
  return root;
}

describe("finding vendor libraries without loading them", () => {
  it("an override names the file; a missing override file is not-found with the variable in the reason", () => {
    const root = tree({ "custom/nvml.so": "" });
    const found = findLibraries(
      { GPUPLAN_NVML_LIBRARY: join(root, "custom/nvml.so"), GPUPLAN_CUDA_LIBRARY: join(root, "missing.so") },
      [],
    );
    expect(found.nvml).toEqual({ found: true, path: join(root, "custom/nvml.so") });
    expect(found.cuda).toEqual({
      found: false,
      reason: `GPUPLAN_CUDA_LIBRARY=${join(root, "missing.so")}: no such file`,
    });
    expect(found.hip).toEqual({ found: false, reason: "libamdhip64.so not found" });
  });

  it("an override that is not a regular file is not-found, saying what it is (dlopen would read a FIFO or a terminal until --timeout)", () => {
    const root = tree({ "real.so": "" });
    execFileSync("mkfifo", [join(root, "fifo.so")]);
    symlinkSync(join(root, "real.so"), join(root, "link.so"));
    const found = findLibraries(
      {
        GPUPLAN_NVML_LIBRARY: join(root, "fifo.so"),
        GPUPLAN_CUDA_LIBRARY: root,
        GPUPLAN_HIP_LIBRARY: "/dev/tty",
        GPUPLAN_ROCM_SMI_LIBRARY: join(root, "link.so"),
      },
      [],
    );
    expect(found.nvml).toEqual({
      found: false,
      reason: `GPUPLAN_NVML_LIBRARY=${join(root, "fifo.so")}: a FIFO, not a library file`,
    });
    expect(found.cuda).toEqual({
      found: false,
      reason: `GPUPLAN_CUDA_LIBRARY=${root}: a directory, not a library file`,
    });
    expect(found.hip).toEqual({
      found: false,
      reason: "GPUPLAN_HIP_LIBRARY=/dev/tty: a device, not a library file",
    });
    expect(found["rocm-smi"]).toEqual({ found: true, path: join(root, "link.so") });
  });

  it("a relative override or LD_LIBRARY_PATH entry is made absolute (dlopen would search the system for a bare name)", () => {
    const root = tree({ "mynvml.so": "", "lib/libcuda.so.1": "" });
    const cwd = process.cwd();
    process.chdir(root);
    try {
      const found = findLibraries({ GPUPLAN_NVML_LIBRARY: "mynvml.so", LD_LIBRARY_PATH: "lib" });
      expect(found.nvml).toEqual({ found: true, path: join(root, "mynvml.so") });
      expect(found.cuda).toEqual({ found: true, path: join(root, "lib/libcuda.so.1") });
      expect(findLibraries({ GPUPLAN_HIP_LIBRARY: "nothere.so" }, []).hip).toEqual({
        found: false,
        reason: "GPUPLAN_HIP_LIBRARY=nothere.so: no such file",
      });
    } finally {
      process.chdir(cwd);
    }
  });

  it("searches directories in order, preferring the soname, then the shortest versioned name", () => {
    const root = tree({
      "a/libcuda.so.535.183.01": "",
      "b/libcuda.so.1": "",
      "b/libnvidia-ml.so.535.183.01": "",
      "b/libnvidia-ml.so.1": "",
      "c/librocm_smi64.so.6.2.0": "",
      "c/librocm_smi64.so.6": "",
      "c/libamdhip64.so.5.2.21153": "",
      "c/libamd_smi.so.24": "",
    });
    const found = findLibraries({}, [join(root, "a"), join(root, "b"), join(root, "c")]);
    expect(found.cuda).toEqual({ found: true, path: join(root, "a/libcuda.so.535.183.01") });
    expect(found.nvml).toEqual({ found: true, path: join(root, "b/libnvidia-ml.so.1") });
    expect(found["rocm-smi"]).toEqual({ found: true, path: join(root, "c/librocm_smi64.so.6") });
    expect(found.hip).toEqual({ found: true, path: join(root, "c/libamdhip64.so.5.2.21153") });
    expect(found["amd-smi"]).toEqual({ found: true, path: join(root, "c/libamd_smi.so.24") });
  });

  it("does not mistake look-alike files for a library", () => {
    const root = tree({ "d/libcuda.so.1.bak": "", "d/libcudart.so.12": "", "d/libnvidia-ml.so.1.txt": "" });
    const found = findLibraries({}, [join(root, "d")]);
    expect(found.cuda.found).toBe(false);
    expect(found.nvml.found).toBe(false);
  });

  it("search order: LD_LIBRARY_PATH, then ld.so.conf (with include globs), then defaults, then install paths", () => {
    const root = tree({
      "ld.so.conf": "# comment\ninclude ld.so.conf.d/*.conf\n/opt/direct\n",
      "ld.so.conf.d/b.conf": "/opt/b\n",
      "ld.so.conf.d/a.conf": "/opt/a # trailing comment\n",
      "ld.so.conf.d/ignored.txt": "/opt/ignored\n",
    });
    const dirs = searchDirectories({ LD_LIBRARY_PATH: "/first:/second" }, join(root, "ld.so.conf"));
    expect(dirs.slice(0, 5)).toEqual(["/first", "/second", "/opt/a", "/opt/b", "/opt/direct"]);
    expect(dirs).not.toContain("/opt/ignored");
    expect(dirs.indexOf("/usr/lib/x86_64-linux-gnu")).toBeLessThan(dirs.indexOf("/opt/rocm/lib"));
    expect(dirs).toContain("/usr/local/cuda/lib64");
  });
});
