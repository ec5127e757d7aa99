import { describe, expect, it } from "vitest";
import type { Inventory } from "../../src/inventory/types.js";
import { formatInventory } from "../../src/ui/detect-table.js";
import { loadPaint, noPaint } from "../../src/ui/paint.js";

const GiB = 1024 ** 3;
/** Drop SGR colour sequences (ESC [ … m). */
const stripAnsi = (text: string) =>
  text
    .split("\u001b[")
    .map((part, i) => (i === 0 ? part : part.replace(/^[0-9;]*m/, "")))
    .join("");
const inventory: Inventory = {
  schema: "gpuplan/inventory@1",
  cpu: {
    model: "AMD EPYC 9654",
    logicalCores: 192,
    usableCores: 16,
    memoryBytes: 64 * GiB,
    numaNodes: [{ id: 0, cpus: [0] }],
  },
  gpus: [
    {
      id: "cuda:0",
      index: 0,
      backend: "cuda",
      name: "NVIDIA A100-SXM4-80GB",
      uuid: "GPU-11111111-2222-3333-4444-555555555555",
      pciBusId: "0000:07:00.0",
      memoryBytes: 80 * GiB,
      freeMemoryBytes: 79 * GiB,
      computeCapability: "8.0",
      numaNode: 0,
      mig: { enabled: true },
    },
    {
      id: "cuda:0/mig0",
      index: 0,
      backend: "cuda",
      name: "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
      uuid: "MIG-aaaaaaaa-2222-3333-4444-555555555555",
      pciBusId: "0000:07:00.0",
      memoryBytes: 40 * GiB,
      freeMemoryBytes: null,
      computeCapability: "8.0",
      numaNode: 0,
      mig: { enabled: true, parentUuid: "GPU-11111111-2222-3333-4444-555555555555" },
    },
  ],
  visibility: {
    applied: true,
    narrowedBy: ["CUDA_VISIBLE_DEVICES"],
    variables: { CUDA_VISIBLE_DEVICES: "0" },
    hiddenGpus: 3,
  },
  probes: [
    { name: "cpu", status: "ok", message: "16 of 192 cores usable", durationMs: 1.25 },
    {
      name: "nvml",
      status: "ok",
      message: "4 GPUs, driver 550.54.15",
      version: "NVML 12.550.54.15",
      durationMs: 41,
    },
    {
      name: "cuda",
      status: "timeout",
      message: "cuInit did not return within 10 s",
      hint: "check dmesg",
      durationMs: 10000,
    },
  ],
};

describe("the human form of an inventory", () => {
  it("renders a fixed table, the CPU, one line per probe with hints, and the visibility notes", () => {
    expect(formatInventory(inventory, ["CUDA_VISIBLE_DEVICES=0 hides 3 of the cuda devices"], noPaint)).toBe(
      [
        "1 GPU and 1 MIG instance visible (3 hidden; narrowed by CUDA_VISIBLE_DEVICES)",
        "ID           NAME                               MEMORY USED   TOTAL  UTIL  TEMP  POWER  CC   UUID          PCI           NUMA",
        "cuda:0       NVIDIA A100-SXM4-80GB                    1 GiB  80 GiB     -     -      -  8.0  GPU-11111111  0000:07:00.0  0     MIG on",
        "cuda:0/mig0  NVIDIA A100-SXM4-80GB MIG 3g.40gb            -  40 GiB     -     -      -  8.0  MIG-aaaaaaaa  0000:07:00.0  0",
        "",
        "CPU  AMD EPYC 9654: 16 of 192 cores usable, 64 GiB memory, 1 NUMA node",
        "",
        "Probes",
        "  cpu   ok         16 of 192 cores usable (1.3ms)",
        "  nvml  ok         4 GPUs, driver 550.54.15 [NVML 12.550.54.15] (41ms)",
        "  cuda  timeout    cuInit did not return within 10 s (10.0s)",
        "        hint: check dmesg",
        "",
        "visibility: CUDA_VISIBLE_DEVICES=0 hides 3 of the cuda devices",
        "",
      ].join("\n"),
    );
  });

  it("colours only the status words, the headings and hints, and only when asked", async () => {
    const plain = formatInventory(inventory, [], noPaint);
    const coloured = formatInventory(inventory, [], await loadPaint(1));
    expect(plain).not.toContain("\x1b[");
    expect(coloured).toContain("\x1b[31mtimeout   \x1b[39m");
    expect(coloured).toContain("\x1b[32mok        \x1b[39m");
    expect(stripAnsi(coloured)).toBe(plain);
  });

  it("cuts a GPU name longer than NVML's buffer, so that one library's answer cannot widen every row", () => {
    const long = {
      ...inventory,
      gpus: inventory.gpus.map((g, i) =>
        i === 0 ? { ...g, name: "A".repeat(90) + "\u001b".repeat(4000) } : g,
      ),
    };
    const lines = formatInventory(long, [], noPaint).split("\n");
    expect(lines.find((l) => l.startsWith("cuda:0 "))).toContain(`${"A".repeat(90)}\\x1b\\… `);
    expect(Math.max(...lines.map((l) => l.length))).toBeLessThan(250);
  });

  it("says so when no GPU is visible because a variable hid them all", () => {
    const none = { ...inventory, gpus: [], visibility: { ...inventory.visibility!, hiddenGpus: 4 } };
    expect(formatInventory(none, [], noPaint)).toMatch(
      /^No GPU visible \(4 hidden; narrowed by CUDA_VISIBLE_DEVICES\)\.\n/,
    );
  });
});
