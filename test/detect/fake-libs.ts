/** Where the fake vendor libraries are built, and helpers to run detection against them. */
import { existsSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const FAKE_SRC_DIR = join(ROOT, "fixtures/fake-libs");
export const FAKE_LIB_DIR = join(ROOT, "fixtures/lib/build");
export const SCENARIOS = join(FAKE_SRC_DIR, "scenarios");

export const FAKE_LIBS = {
  nvml: { dir: "nvml", file: "libnvidia-ml.so.1", source: "fake-nvml.c", flags: [] as string[] },
  nvmlOld: {
    dir: "nvml-old",
    file: "libnvidia-ml.so.1",
    source: "fake-nvml.c",
    flags: ["-DFAKE_OLD_DRIVER"],
  },
  cuda: { dir: "cuda", file: "libcuda.so.1", source: "fake-cuda.c", flags: [] as string[] },
  rocmSmi: { dir: "rocm-smi", file: "librocm_smi64.so.7", source: "fake-rocm-smi.c", flags: [] as string[] },
  amdSmi: { dir: "amd-smi", file: "libamd_smi.so.26", source: "fake-amd-smi.c", flags: [] as string[] },
  hip: { dir: "hip", file: "libamdhip64.so.6", source: "fake-hip.c", flags: [] as string[] },
};

export const fakeLib = (name: keyof typeof FAKE_LIBS): string =>
  join(FAKE_LIB_DIR, FAKE_LIBS[name].dir, FAKE_LIBS[name].file);

/** True when the setup could compile the fakes (no C compiler → those tests skip). */
export const fakeLibsBuilt = Object.keys(FAKE_LIBS).every((n) =>
  existsSync(fakeLib(n as keyof typeof FAKE_LIBS)),
);

const MISSING = "/nonexistent/gpuplan-test-library.so";

/**
 * An environment that loads exactly the given fake libraries (every other vendor library
 * points at a missing file, so the machine's own libraries stay out of the test).
 */
export function fakeEnv(
  scenario: string,
  libs: Partial<Record<"nvml" | "cuda" | "rocmSmi" | "amdSmi" | "hip", string>>,
  extra: NodeJS.ProcessEnv = {},
): NodeJS.ProcessEnv {
  return {
    PATH: process.env.PATH,
    GPUPLAN_FAKE_SCENARIO: join(SCENARIOS, scenario),
    GPUPLAN_NVML_LIBRARY: libs.nvml ?? MISSING,
    GPUPLAN_CUDA_LIBRARY: libs.cuda ?? MISSING,
    GPUPLAN_ROCM_SMI_LIBRARY: libs.rocmSmi ?? MISSING,
    GPUPLAN_AMD_SMI_LIBRARY: libs.amdSmi ?? MISSING,
    GPUPLAN_HIP_LIBRARY: libs.hip ?? MISSING,
    GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-empty"),
    ...extra,
  };
}
