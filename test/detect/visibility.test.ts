import { describe, expect, it } from "vitest";
import {
  applyVisibility,
  type SelectableGpu,
  selectAmdDevices,
  selectCudaDevices,
} from "../../src/detect/visibility.js";
import type { GpuInfo } from "../../src/inventory/types.js";

const U = (n: number) => `GPU-${String(n).repeat(8)}-aaaa-4bbb-8ccc-${String(n).repeat(12)}`;
const MIG = (n: number, k: number) => `MIG-${String(n).repeat(7)}${k}-dddd-4eee-8fff-000000000000`;

/** Four GPUs in CUDA order; the third (cuda:2) has two MIG instances. */
const ORDERED: SelectableGpu[] = [
  { id: "cuda:0", uuid: U(1), migs: [] },
  { id: "cuda:1", uuid: U(2), migs: [] },
  {
    id: "cuda:2",
    uuid: U(3),
    migs: [
      { id: "cuda:2/mig0", uuid: MIG(3, 0), gpuInstanceId: 1, computeInstanceId: 0 },
      { id: "cuda:2/mig1", uuid: MIG(3, 1), gpuInstanceId: 2, computeInstanceId: 0 },
    ],
  },
  { id: "cuda:3", uuid: "GPU-33339999-aaaa-4bbb-8ccc-000000000000", migs: [] },
];

describe("CUDA_VISIBLE_DEVICES", () => {
  it.each<[string, string, string[], string | null]>([
    ["unset-like empty string hides everything", "", [], null],
    ["one index", "1", ["cuda:1"], null],
    ["indices keep the listed order", "3,0", ["cuda:3", "cuda:0"], null],
    ["spaces around entries are tolerated", " 0 , 1 ", ["cuda:0", "cuda:1"], null],
    ["an index out of range stops the list", "0,7,1", ["cuda:0"], "7"],
    ["-1 is invalid: nothing visible", "-1", [], "-1"],
    ["NoDevFiles: nothing visible", "NoDevFiles", [], "NoDevFiles"],
    ["a later invalid entry keeps the earlier ones", "1,bogus,0", ["cuda:1"], "bogus"],
    ["a full GPU UUID", U(2), ["cuda:1"], null],
    ["a UUID prefix that is unique", "GPU-2222", ["cuda:1"], null],
    ["a UUID prefix is case-insensitive", "gpu-2222", ["cuda:1"], null],
    [
      "an ambiguous prefix stops (cuda:2 and cuda:3 both start GPU-3333)",
      "0,GPU-3333",
      ["cuda:0"],
      "GPU-3333",
    ],
    ["an unknown UUID stops", "GPU-ffffffff", [], "GPU-ffffffff"],
    ["a MIG-enabled GPU by index brings its instances", "2", ["cuda:2", "cuda:2/mig0", "cuda:2/mig1"], null],
    ["a MIG UUID selects that instance and its parent", MIG(3, 1), ["cuda:2", "cuda:2/mig1"], null],
    ["the legacy MIG-GPU-<uuid>/<gi>/<ci> form", `MIG-${U(3)}/1/0`, ["cuda:2", "cuda:2/mig0"], null],
    ["an unknown MIG UUID stops", "MIG-00000000", [], "MIG-00000000"],
    ["a device listed twice counts once", "0,0,1", ["cuda:0", "cuda:1"], null],
  ])("%s (%j)", (_, value, ids, stoppedAt) => {
    expect(selectCudaDevices(value, ORDERED)).toEqual({ ids, stoppedAt });
  });
});

describe("ROCR_VISIBLE_DEVICES / HIP_VISIBLE_DEVICES lists", () => {
  const amd: SelectableGpu[] = [0, 1, 2, 3].map((i) => ({
    id: `rocm:${i}`,
    uuid: `GPU-${String(i + 1).repeat(16)}`,
    migs: [],
  }));
  it.each<[string, boolean, string[], string | null]>([
    ["0,2", true, ["rocm:0", "rocm:2"], null],
    ["GPU-3333333333333333,0", true, ["rocm:2", "rocm:0"], null],
    ["GPU-3333333333333333", false, [], "GPU-3333333333333333"],
    ["1,9,2", true, ["rocm:1"], "9"],
    ["", true, [], null],
  ])("%j (UUIDs allowed: %j)", (value, uuids, ids, stoppedAt) => {
    expect(selectAmdDevices(value, amd, uuids)).toEqual({ ids, stoppedAt });
  });
});

function gpu(id: string, extra: Partial<GpuInfo> = {}): GpuInfo {
  const backend = id.startsWith("cuda") ? "cuda" : "rocm";
  const index = Number(/:(\d+)/.exec(id)![1]);
  return {
    id,
    index,
    backend,
    name: "GPU",
    uuid: `GPU-${backend}${index}`,
    pciBusId: `0000:${(index + 1).toString(16).padStart(2, "0")}:00.0`,
    memoryBytes: 1,
    computeCapability: null,
    mig: null,
    ...extra,
  };
}

describe("applyVisibility", () => {
  // PCI order cuda:0..2; CUDA's fastest-first order puts cuda:2 first, then cuda:0, then cuda:1.
  const nvidia = [
    gpu("cuda:0", { cudaIndex: 1 }),
    gpu("cuda:1", { cudaIndex: 2 }),
    gpu("cuda:2", { cudaIndex: 0 }),
  ];
  // HIP order: rocm:2, rocm:0, rocm:1.
  const amd = [
    gpu("rocm:0", { hipIndex: 1 }),
    gpu("rocm:1", { hipIndex: 2 }),
    gpu("rocm:2", { hipIndex: 0 }),
  ];
  const ids = (env: NodeJS.ProcessEnv, all = false) =>
    applyVisibility([...nvidia, ...amd], env, all).gpus.map((g) => g.id);

  it.each<[string, NodeJS.ProcessEnv, string[]]>([
    ["nothing set: everything", {}, ["cuda:0", "cuda:1", "cuda:2", "rocm:0", "rocm:1", "rocm:2"]],
    ["CUDA indices follow CUDA's order by default", { CUDA_VISIBLE_DEVICES: "0" }, ["cuda:2", "rocm:2"]],
    [
      "CUDA_DEVICE_ORDER=PCI_BUS_ID: indices follow PCI order",
      { CUDA_VISIBLE_DEVICES: "0", CUDA_DEVICE_ORDER: "PCI_BUS_ID", HIP_VISIBLE_DEVICES: "0,1,2" },
      ["cuda:0", "rocm:0", "rocm:1", "rocm:2"],
    ],
    [
      "empty CUDA_VISIBLE_DEVICES hides every NVIDIA GPU (not AMD: empty means unset to HIP)",
      { CUDA_VISIBLE_DEVICES: "" },
      ["rocm:0", "rocm:1", "rocm:2"],
    ],
    [
      "ROCR by index uses HIP's order",
      { ROCR_VISIBLE_DEVICES: "0" },
      ["cuda:0", "cuda:1", "cuda:2", "rocm:2"],
    ],
    ["ROCR by UUID", { ROCR_VISIBLE_DEVICES: "GPU-rocm1" }, ["cuda:0", "cuda:1", "cuda:2", "rocm:1"]],
    [
      "HIP re-indexes what ROCR left: ROCR=1,2 leaves [rocm:0, rocm:1]; HIP=1 → rocm:1",
      { ROCR_VISIBLE_DEVICES: "1,2", HIP_VISIBLE_DEVICES: "1" },
      ["cuda:0", "cuda:1", "cuda:2", "rocm:1"],
    ],
    [
      "the classic trap: ROCR=2 then HIP=2 hides every AMD GPU",
      { ROCR_VISIBLE_DEVICES: "2", HIP_VISIBLE_DEVICES: "2" },
      ["cuda:0", "cuda:1", "cuda:2"],
    ],
    [
      "GPU_DEVICE_ORDINAL when HIP_VISIBLE_DEVICES is unset",
      { GPU_DEVICE_ORDINAL: "1" },
      ["cuda:0", "cuda:1", "cuda:2", "rocm:0"],
    ],
    [
      "HIP_VISIBLE_DEVICES wins over GPU_DEVICE_ORDINAL",
      { HIP_VISIBLE_DEVICES: "2", GPU_DEVICE_ORDINAL: "1" },
      ["cuda:0", "cuda:1", "cuda:2", "rocm:1"],
    ],
  ])("%s", (_, env, expected) => {
    expect(ids(env)).toEqual(expected);
  });

  it("--all ignores the variables but still records them", () => {
    const result = applyVisibility(
      [...nvidia, ...amd],
      { CUDA_VISIBLE_DEVICES: "", ROCR_VISIBLE_DEVICES: "0" },
      true,
    );
    expect(result.gpus).toHaveLength(6);
    expect(result.visibility).toEqual({
      applied: false,
      narrowedBy: [],
      variables: { CUDA_VISIBLE_DEVICES: "", ROCR_VISIBLE_DEVICES: "0" },
      hiddenGpus: 0,
    });
  });

  it("records which variables narrowed the view and how many GPUs they hid", () => {
    const result = applyVisibility(
      [...nvidia, ...amd],
      { CUDA_VISIBLE_DEVICES: "0,1", ROCR_VISIBLE_DEVICES: "0,1,2" },
      false,
    );
    // ROCR lists all three AMD GPUs: it is recorded but narrowed nothing; HIP then reads CUDA_VISIBLE_DEVICES.
    expect(result.visibility).toMatchObject({
      applied: true,
      hiddenGpus: 2,
      narrowedBy: ["CUDA_VISIBLE_DEVICES"],
    });
    expect(result.notes[0]).toBe("CUDA_VISIBLE_DEVICES=0,1 hides 1 of the cuda devices");
  });

  it("MIG: an instance UUID keeps its parent and that instance only", () => {
    const parent = gpu("cuda:0", { uuid: "GPU-p", mig: { enabled: true } });
    const instances = [0, 1].map((k) =>
      gpu("cuda:0", {
        id: `cuda:0/mig${k}`,
        uuid: `MIG-${k}abc`,
        mig: { enabled: true, parentUuid: "GPU-p", gpuInstanceId: k + 1 },
      }),
    );
    const result = applyVisibility([parent, ...instances, gpu("cuda:1")], {
      CUDA_VISIBLE_DEVICES: "MIG-1abc",
    });
    expect(result.gpus.map((g) => g.id)).toEqual(["cuda:0", "cuda:0/mig1"]);
    expect(result.visibility.hiddenGpus).toBe(2);
  });
});
