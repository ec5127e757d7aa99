/** Inventories for compile tests: the short form a user would write, and a MIG machine. */
import { compilePlan } from "../../src/compile/compile.js";
import { type InventoryChoice, targetInventory } from "../../src/inventory/load-inventory.js";
import { expandShortInventory } from "../../src/inventory/short-form.js";
import type { GpuInfo, Inventory, ShortInventory } from "../../src/inventory/types.js";
import { check } from "./pipeline.js";

export const GiB = 1024 ** 3;

export function inventory(gpus: ShortInventory["gpus"], threads = 16): Inventory {
  return expandShortInventory({ gpus, cpu: { threads, memory: "256GiB" } }, "file", "test");
}

export const choose = (inv: Inventory, label = "file:test.yaml"): InventoryChoice => ({
  inventory: inv,
  label,
  problems: [],
});

/** Compile pipeline text against an inventory or a built-in target name. */
export function compileText(text: string, inv: Inventory | string) {
  return compilePlan(check(text), typeof inv === "string" ? targetInventory(inv) : choose(inv));
}

const gpu = (over: Partial<GpuInfo> & Pick<GpuInfo, "id" | "uuid">): GpuInfo => ({
  backend: "cuda",
  name: "NVIDIA A100-SXM4-80GB",
  pciBusId: null,
  memoryBytes: 80 * GiB,
  computeCapability: "8.0",
  mig: null,
  ...over,
});

/**
 * The MIG inventory with both instances made compute instances of one GPU instance: each
 * reports the GPU instance's shared 40 GiB, as NVML does.
 */
export function sharedGpuInstanceInventory(): Inventory {
  const inv = migInventory();
  const second = inv.gpus[2]!;
  second.mig = { ...second.mig!, gpuInstanceId: 1, computeInstanceId: 1 };
  return inv;
}

/** One plain A100 and one MIG-enabled A100 split into two 3g.40gb instances. */
export function migInventory(): Inventory {
  const parent = "GPU-11111111-1111-1111-1111-111111111111";
  return {
    schema: "gpuplan/inventory@1",
    source: "detect",
    cpu: { model: "test", logicalCores: 32, usableCores: 32, memoryBytes: 256 * GiB },
    gpus: [
      gpu({ id: "cuda:0", uuid: parent, pciBusId: "0000:07:00.0", mig: { enabled: true } }),
      gpu({
        id: "cuda:0/mig1",
        uuid: "MIG-aaaaaaaa-aaaa-aaaa-aaaa-aaaaaaaaaaaa",
        name: "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
        memoryBytes: 40 * GiB,
        mig: { enabled: true, parentUuid: parent, gpuInstanceId: 1, computeInstanceId: 0 },
      }),
      gpu({
        id: "cuda:0/mig2",
        uuid: "MIG-bbbbbbbb-bbbb-bbbb-bbbb-bbbbbbbbbbbb",
        name: "NVIDIA A100-SXM4-80GB MIG 3g.40gb",
        memoryBytes: 40 * GiB,
        mig: { enabled: true, parentUuid: parent, gpuInstanceId: 2, computeInstanceId: 0 },
      }),
      gpu({
        id: "cuda:1",
        uuid: "GPU-22222222-2222-2222-2222-222222222222",
        pciBusId: "0000:0f:00.0",
        mig: { enabled: false },
      }),
    ],
    probes: [],
  };
}
