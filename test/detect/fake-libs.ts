/** Where the fake vendor libraries are built, and helpers to run detection against them. */
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { AMD_SMI_SYMBOLS } from "../../src/detect/child/symbols/amd-smi.js";
import { CUDA_SYMBOLS } from "../../src/detect/child/symbols/cuda.js";
import { HIP_SYMBOLS } from "../../src/detect/child/symbols/hip.js";
import { NVML_SYMBOLS } from "../../src/detect/child/symbols/nvml.js";
import { ROCM_SMI_SYMBOLS } from "../../src/detect/child/symbols/rocm-smi.js";
import type { SymbolTable } from "../../src/detect/child/symbols/table.js";

export const ROOT = fileURLToPath(new URL("../..", import.meta.url));
export const FAKE_SRC_DIR = join(ROOT, "fixtures/fake-libs");
export const FAKE_LIB_DIR = join(ROOT, "fixtures/lib/build");
export const SCENARIOS = join(FAKE_SRC_DIR, "scenarios");

/** Every symbol of a table the probe can do without. */
const optionalSymbols = (table: SymbolTable): string[] =>
  Object.entries(table)
    .filter(([, spec]) => !spec.required)
    .map(([name]) => name);

interface FakeLib {
  dir: string;
  file: string;
  source: string;
  flags: string[];
  /** Symbols the build does not export (a linker version script makes them local). */
  hide?: string[];
}

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
  // The same fakes exporting only what each probe requires: every optional symbol's absence must
  // be handled (its field null, the probe still ok), whichever driver release lacks it.
  nvmlMinimal: {
    dir: "nvml-minimal",
    file: "libnvidia-ml.so.1",
    source: "fake-nvml.c",
    flags: [],
    hide: optionalSymbols(NVML_SYMBOLS),
  },
  cudaMinimal: {
    dir: "cuda-minimal",
    file: "libcuda.so.1",
    source: "fake-cuda.c",
    flags: [],
    hide: optionalSymbols(CUDA_SYMBOLS),
  },
  rocmSmiMinimal: {
    dir: "rocm-smi-minimal",
    file: "librocm_smi64.so.7",
    source: "fake-rocm-smi.c",
    flags: [],
    hide: optionalSymbols(ROCM_SMI_SYMBOLS),
  },
  amdSmiMinimal: {
    dir: "amd-smi-minimal",
    file: "libamd_smi.so.26",
    source: "fake-amd-smi.c",
    flags: [],
    hide: optionalSymbols(AMD_SMI_SYMBOLS),
  },
  hipMinimal: {
    dir: "hip-minimal",
    file: "libamdhip64.so.6",
    source: "fake-hip.c",
    flags: [],
    hide: optionalSymbols(HIP_SYMBOLS),
  },
} satisfies Record<string, FakeLib>;

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
    // Who holds GPU slots is read only when GPUs have processes: never the machine's shared lock dir.
    GPUPLAN_LOCK_DIR: join(tmpdir(), "gpuplan-test-no-locks"),
    ...extra,
  };
}

/** A copy of a scenario with `extra` lines appended (a key given twice takes its last value). */
export function scenarioWith(base: string, extra: string): string {
  const file = join(mkdtempSync(join(tmpdir(), "gpuplan-scenario-")), base);
  writeFileSync(file, `${readFileSync(join(SCENARIOS, base), "utf8")}\n${extra}\n`);
  return file;
}
