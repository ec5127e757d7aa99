// The parts of `gpuplan detect`'s table that read like nvidia-smi: the driver header, the live
// columns, and the process list (gpuplan's own processes marked), all outside text escaped.
import { describe, expect, it } from "vitest";
import type { GpuInfo, GpuProcess, Inventory } from "../../src/inventory/types.js";
import { formatInventory } from "../../src/ui/detect-table.js";
import { loadPaint, noPaint, stripColor } from "../../src/ui/paint.js";

const GiB = 1024 ** 3;

function gpu(id: string, extra: Partial<GpuInfo> = {}): GpuInfo {
  return {
    id,
    backend: "cuda",
    name: "NVIDIA H100 80GB HBM3",
    uuid: `GPU-${id.replace(/\W/g, "")}-0000-4000-8000-000000000000`,
    pciBusId: "0000:18:00.0",
    memoryBytes: 80 * GiB,
    computeCapability: "9.0",
    mig: null,
    ...extra,
  };
}

const proc = (pid: number, extra: Partial<GpuProcess> = {}): GpuProcess => ({
  pid,
  usedMemoryBytes: 2 * GiB,
  user: "alice",
  command: "python train.py",
  gpuplan: null,
  ...extra,
});

function inventory(gpus: GpuInfo[], drivers: Inventory["drivers"] = {}): Inventory {
  return {
    schema: "gpuplan/inventory@1",
    cpu: { model: "AMD EPYC", logicalCores: 8, usableCores: 8, memoryBytes: 64 * GiB },
    gpus,
    drivers,
    probes: [],
  };
}

const section = (text: string, heading: string): string[] => {
  const lines = text.split("\n");
  const start = lines.indexOf(heading);
  const end = lines.indexOf("", start);
  return lines.slice(start, end);
};

describe("detect's table, nvidia-smi style", () => {
  it("starts with the driver and CUDA / HIP versions it knows, and says nothing it does not", () => {
    const text = formatInventory(
      inventory([gpu("cuda:0")], {
        nvidia: { driverVersion: "550.54.15", cudaVersion: "12.4" },
        amd: { driverVersion: null, hipVersion: "6.2.41134" },
      }),
      [],
      noPaint,
    );
    expect(text.split("\n").slice(0, 3)).toEqual([
      "NVIDIA  driver 550.54.15  CUDA 12.4",
      "AMD     HIP 6.2.41134",
      "",
    ]);
    expect(formatInventory(inventory([gpu("cuda:0")]), [], noPaint)).toMatch(/^1 GPU\n/);
  });

  it("shows used and total memory, utilisation, temperature and power, and a dash for what the driver does not say", () => {
    const text = formatInventory(
      inventory([
        gpu("cuda:0", {
          usedMemoryBytes: 40 * GiB,
          utilizationPercent: 87,
          temperatureC: 64.4,
          powerWatts: 312.5,
        }),
        gpu("cuda:1", {
          freeMemoryBytes: 60 * GiB,
          utilizationPercent: null,
          temperatureC: null,
          powerWatts: null,
        }),
      ]),
      [],
      noPaint,
    );
    expect(text).toMatch(/^cuda:0 +NVIDIA H100 80GB HBM3 +40 GiB +80 GiB +87% +64C +313W +9\.0 /m);
    // Only free memory known (an older inventory): used is what is not free.
    expect(text).toMatch(/^cuda:1 +NVIDIA H100 80GB HBM3 +20 GiB +80 GiB +- +- +- +9\.0 /m);
  });

  it("lists each process once, on the device it runs on, gpuplan's own with their run, pipeline and step", () => {
    const parent = gpu("cuda:1", {
      mig: { enabled: true },
      processes: [proc(10), proc(11)],
    });
    const text = formatInventory(
      inventory([
        gpu("cuda:0", {
          processes: [
            proc(4242, { gpuplan: { run: "run-42", pipeline: "train", step: "fit" } }),
            proc(4243, { user: null, command: null, usedMemoryBytes: null }),
            proc(4244, { gpuplan: { run: "run-42", pipeline: null, step: null } }),
          ],
        }),
        parent,
        gpu("cuda:1/mig0", { mig: { enabled: true, parentUuid: parent.uuid }, processes: [proc(10)] }),
        gpu("cuda:1/mig1", { mig: { enabled: true, parentUuid: parent.uuid }, processes: [proc(11)] }),
      ]),
      [],
      noPaint,
    );
    expect(section(text, "Processes")).toEqual([
      "Processes",
      "  GPU           PID  USER   MEMORY  GPUPLAN           COMMAND",
      "  cuda:0       4242  alice   2 GiB  run-42 train/fit  python train.py",
      "  cuda:0       4243  -           -  -                 -",
      "  cuda:0       4244  alice   2 GiB  run-42            python train.py",
      "  cuda:1/mig0    10  alice   2 GiB  -                 python train.py",
      "  cuda:1/mig1    11  alice   2 GiB  -                 python train.py",
    ]);
  });

  it("none, not reported, or (an inventory from before processes were listed) nothing at all", () => {
    const none = formatInventory(inventory([gpu("cuda:0", { processes: [] })]), [], noPaint);
    expect(section(none, "Processes")).toEqual(["Processes", "  none"]);
    const unknown = formatInventory(inventory([gpu("cuda:0", { processes: null })]), [], noPaint);
    expect(section(unknown, "Processes")).toEqual(["Processes", "  not reported by the GPU libraries"]);
    expect(formatInventory(inventory([gpu("cuda:0")]), [], noPaint)).not.toContain("Processes");
  });

  it("escapes every outside string (driver versions, users, commands, run names) and cuts long commands", () => {
    const hostile = "\u001b]0;owned\u0007\u001b[2J\rx";
    const text = formatInventory(
      inventory(
        [
          gpu("cuda:0", {
            name: `H100${hostile}`,
            processes: [
              proc(1, { user: hostile, command: `${hostile} ${"a".repeat(200)}` }),
              proc(2, { gpuplan: { run: hostile, pipeline: hostile, step: hostile } }),
            ],
          }),
        ],
        { nvidia: { driverVersion: hostile, cudaVersion: "12.4" } },
      ),
      [],
      noPaint,
    );
    // biome-ignore lint/suspicious/noControlCharactersInRegex: no raw control character may remain
    expect(text).not.toMatch(/[\u0000-\u0009\u000b-\u001f\u007f]/);
    expect(text).toContain("\\x1b]0;owned\\x07\\x1b[2J\\rx");
    const command = section(text, "Processes")[1 + 1]!.split("  ").pop()!.trim();
    expect([...command].length).toBeLessThanOrEqual(80);
    expect(command.endsWith("…")).toBe(true);
  });

  it("paints the gpuplan mark when there is colour, and nothing else changes", async () => {
    const inv = inventory([
      gpu("cuda:0", { processes: [proc(1, { gpuplan: { run: "r", pipeline: "p", step: "s" } })] }),
    ]);
    const coloured = formatInventory(inv, [], await loadPaint(1));
    expect(coloured).toContain("\u001b[36mr p/s\u001b[39m");
    expect(stripColor(coloured)).toBe(formatInventory(inv, [], noPaint));
  });
});
