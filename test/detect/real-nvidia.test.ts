// NVIDIA's own NVML and CUDA driver libraries (Debian non-free's libnvidia-ml1 and libcuda1,
// unpacked without their driver packages by .ci/fetch-nvidia-libs): detection loads them for
// real on this GPU-less machine and answers with the vendor's own words, and every symbol
// gpuplan declares is either exported by this driver or optional — and handled when absent.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { CUDA_SYMBOLS } from "../../src/detect/child/symbols/cuda.js";
import { NVML_SYMBOLS } from "../../src/detect/child/symbols/nvml.js";
import type { SymbolTable } from "../../src/detect/child/symbols/table.js";
import { detectInventory } from "../../src/detect/index.js";
import validate from "../../src/generated/inventory-validator.js";
import type { Inventory, ProbeReport } from "../../src/inventory/types.js";
import { gpuplan } from "../helpers/cli.js";
import { FAKE_SRC_DIR, fakeEnv, ROOT, scenarioWith } from "./fake-libs.js";

/** Where .ci/fetch-nvidia-libs unpacked the packages (GPUPLAN_TEST_NVIDIA_DIR overrides). */
const unpacked = process.env.GPUPLAN_TEST_NVIDIA_DIR || join(ROOT, "fixtures/lib/nvidia-real");

function findLibrary(file: string): string | null {
  const lib = join(unpacked, "usr/lib");
  if (!existsSync(lib)) return null;
  for (const arch of readdirSync(lib)) {
    const path = join(lib, arch, "nvidia/current", file);
    if (existsSync(path)) return path;
  }
  return null;
}

const nvml = findLibrary("libnvidia-ml.so.1");
const cuda = findLibrary("libcuda.so.1");
const hasNm = spawnSync("nm", ["--version"], { stdio: "ignore" }).status === 0;
const hasCc = spawnSync("cc", ["--version"], { stdio: "ignore" }).status === 0;
if (!nvml || !cuda) {
  console.warn("real-nvidia tests skipped: run .ci/fetch-nvidia-libs to unpack NVIDIA's NVML and libcuda");
}

const probe = (inv: Inventory, name: ProbeReport["name"]) => inv.probes.find((p) => p.name === name)!;

/** Both real libraries, nothing else (no AMD library, no fake). */
const realEnv = (extra: NodeJS.ProcessEnv = {}) =>
  fakeEnv("h100x8-mig.scenario", { nvml: nvml!, cuda: cuda! }, { GPUPLAN_FAKE_SCENARIO: "", ...extra });

/** The names a library exports (`nm -D --defined-only`, symbol versions dropped). */
function exported(library: string): Set<string> {
  const out = execFileSync("nm", ["-D", "--defined-only", library], { encoding: "utf8" });
  return new Set(
    out
      .split("\n")
      .map((line) => line.trim().split(/\s+/)[2]?.replace(/@.*$/, ""))
      .filter((name): name is string => Boolean(name)),
  );
}

describe.skipIf(!nvml || !cuda)("NVIDIA's real NVML and CUDA driver libraries, without a GPU", () => {
  it("load for real and answer with the vendor's own messages: no-devices, since no NVIDIA GPU is on the bus", async () => {
    const inv = await detectInventory({ env: realEnv() });
    expect(validate(inv)).toBe(true);
    expect(probe(inv, "nvml")).toMatchObject({
      status: "no-devices",
      library: nvml,
      message: "nvmlInit_v2: Driver Not Loaded (9); there is no NVIDIA GPU on the PCI bus",
    });
    expect(probe(inv, "cuda")).toMatchObject({
      status: "no-devices",
      library: cuda,
      message: "cuInit: no CUDA-capable device is detected",
    });
    // libcuda tells its CUDA version without a GPU (cuDriverGetVersion needs no cuInit).
    expect(inv.drivers?.nvidia).toEqual({
      driverVersion: null,
      cudaVersion: expect.stringMatching(/^\d+\.\d$/),
    });
    expect(inv.gpus).toEqual([]);
  });

  it("with an NVIDIA GPU on the bus the same answer is an error with the driver hint", async () => {
    const inv = await detectInventory({
      env: realEnv({ GPUPLAN_SYSFS_ROOT: join(ROOT, "fixtures/detect/sysfs-nvidia") }),
    });
    expect(probe(inv, "nvml")).toMatchObject({
      status: "error",
      message: "nvmlInit_v2: Driver Not Loaded (9)",
      hint: expect.stringContaining("kernel driver is not loaded"),
    });
  });

  it("`gpuplan detect` answers cleanly: exit 0, nothing on stderr, the vendor's words in the table", () => {
    const r = gpuplan(["detect"], { env: realEnv() });
    expect(r.exitCode).toBe(0);
    expect(r.stderr).toBe("");
    expect(r.stdout).toMatch(/^ {2}nvml +no-devices +nvmlInit_v2: Driver Not Loaded \(9\)/m);
    expect(r.stdout).toMatch(/^ {2}cuda +no-devices +cuInit: no CUDA-capable device is detected/m);
  });

  const tables: [string, () => string, SymbolTable][] = [
    ["NVML", () => nvml!, NVML_SYMBOLS],
    ["CUDA", () => cuda!, CUDA_SYMBOLS],
  ];
  for (const [name, library, table] of tables) {
    it.skipIf(!hasNm)(`${name}: every symbol gpuplan declares is exported, or optional`, () => {
      const names = exported(library());
      expect(names.size).toBeGreaterThan(10);
      const absent = Object.keys(table).filter((s) => !names.has(s));
      const requiredButAbsent = absent.filter((s) => table[s]!.required);
      expect(requiredButAbsent).toEqual([]);
      for (const s of absent) expect(table[s]!.required ?? false).toBe(false);
    });
  }

  it.skipIf(!hasNm || !hasCc)(
    "NVML: a fake exporting exactly what this driver exports is probed ok, each missing optional field null",
    async () => {
      const absent = Object.keys(NVML_SYMBOLS).filter((s) => !exported(nvml!).has(s));
      // Driver 535 predates nvmlDeviceGetNumaNodeId (12.4 headers) and nvmlDeviceGetTemperatureV (12.9).
      expect(absent).toEqual(
        expect.arrayContaining(["nvmlDeviceGetNumaNodeId", "nvmlDeviceGetTemperatureV"]),
      );
      const dir = mkdtempSync(join(tmpdir(), "gpuplan-nvml-like-real-"));
      const map = join(dir, "exports.map");
      writeFileSync(map, `{ global: *; local: ${absent.map((s) => `${s}; `).join("")}};\n`);
      const lib = join(dir, "libnvidia-ml.so.1");
      execFileSync("cc", [
        "-shared",
        "-fPIC",
        `-Wl,--version-script=${map}`,
        "-o",
        lib,
        join(FAKE_SRC_DIR, "fake-nvml.c"),
        join(FAKE_SRC_DIR, "scenario.c"),
      ]);
      const inv = await detectInventory({
        env: fakeEnv(
          "busy.scenario",
          { nvml: lib },
          {
            GPUPLAN_FAKE_SCENARIO: scenarioWith("busy.scenario", "nvml.0.nvml_numa = 3"),
          },
        ),
      });
      expect(probe(inv, "nvml").status).toBe("ok");
      // nvmlDeviceGetNumaNodeId is missing: no NUMA node from NVML (sysfs would give the CPU side's).
      expect(inv.gpus[0]).toMatchObject({ numaNode: null, temperatureC: 64 });
    },
  );
});
