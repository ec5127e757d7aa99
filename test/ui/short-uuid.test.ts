// Short UUIDs are unique on the machine (#11.15): lengthened, as git lengthens short hashes, until
// no two GPUs look alike — in the detect table, the locks table, the busy message and the run views.
import { describe, expect, it } from "vitest";
import type { Inventory } from "../../src/inventory/types.js";
import type { GpuState } from "../../src/run/lock/types.js";
import { GpuBusyError } from "../../src/run/lock/types.js";
import type { DryRun } from "../../src/run/prepare/dry-run.js";
import { busyGpuMessage } from "../../src/ui/busy-gpu-message.js";
import { formatInventory } from "../../src/ui/detect-table.js";
import { formatDryRun } from "../../src/ui/dry-run-text.js";
import { formatLocks } from "../../src/ui/locks-table.js";
import { createView } from "../../src/ui/run/index.js";
import { shortUuids } from "../../src/ui/short-uuid.js";
import { ALL_PIPELINES, captureStream, failedSummary, makePlan, plainText } from "./run/fixtures.js";

// Two GPUs whose UUIDs share the first 8 hex digits (and the next group), one that does not.
const A = "GPU-5c1e8f2a-1b2c-4d5e-8f90-0123456789ab";
const B = "GPU-5c1e8f2a-1b2c-4d5e-9f90-0123456789ab";
const C = "GPU-77777777-0000-0000-0000-000000000000";

describe("shortUuids", () => {
  it("is the prefix and 8 hex digits when that is unique", () => {
    expect(shortUuids([A, C])(A)).toBe("GPU-5c1e8f2a");
    expect(shortUuids([A, C])(C)).toBe("GPU-77777777");
  });

  it("lengthens UUIDs that share the first 8 hex digits until they differ, and only those", () => {
    const short = shortUuids([A, B, C]);
    expect(short(A)).toBe("GPU-5c1e8f2a-1b2c-4d5e-8");
    expect(short(B)).toBe("GPU-5c1e8f2a-1b2c-4d5e-9");
    expect(short(C)).toBe("GPU-77777777");
  });

  it("keeps detection's stand-in for an unknown UUID whole: its PCI bus id is what tells the GPU", () => {
    expect(shortUuids(["unknown-0000:05:00.0", A])("unknown-0000:05:00.0")).toBe("unknown-0000:05:00.0");
  });

  it("never ends on a dash, keeps short and odd ids whole, and ignores repeats", () => {
    const D = "GPU-5c1e8f2a-2000-0000-0000-000000000000";
    expect(shortUuids([A, D, A, A])(A)).toBe("GPU-5c1e8f2a-1");
    expect(shortUuids(["GPU-short"])("GPU-short")).toBe("GPU-short");
    expect(shortUuids(["GPU-0000000000000001", "GPU-0000000000000002"])("GPU-0000000000000002")).toBe(
      "GPU-0000000000000002",
    );
  });

  it("escapes what it shows (a UUID read from a lock-file name can be anything)", () => {
    expect(shortUuids(["GPU-\u001b[2Jabc"])("GPU-\u001b[2Jabc")).toBe("GPU-\\x1b[2Jabc");
  });
});

const GiB = 1024 ** 3;
const gpu = (index: number, uuid: string): Inventory["gpus"][number] => ({
  id: `cuda:${index}`,
  index,
  backend: "cuda",
  name: "NVIDIA H100 80GB HBM3",
  uuid,
  pciBusId: `0000:0${index}:00.0`,
  memoryBytes: 80 * GiB,
  freeMemoryBytes: 80 * GiB,
  computeCapability: "9.0",
  numaNode: 0,
  mig: null,
});

describe("tables and messages with look-alike GPUs", () => {
  it("the detect table tells them apart", () => {
    const inventory: Inventory = {
      schema: "gpuplan/inventory@1",
      cpu: { model: "x", logicalCores: 8, usableCores: 8, memoryBytes: 64 * GiB },
      gpus: [gpu(0, A), gpu(1, B), gpu(2, C)],
      probes: [],
    };
    const text = formatInventory(inventory, []);
    expect(text).toMatch(/^cuda:0 .* GPU-5c1e8f2a-1b2c-4d5e-8 /m);
    expect(text).toMatch(/^cuda:1 .* GPU-5c1e8f2a-1b2c-4d5e-9 /m);
    expect(text).toMatch(/^cuda:2 .* GPU-77777777 /m);
  });

  it("the locks table tells them apart", () => {
    const gpus: GpuState[] = [A, B, C].map((uuid, i) => ({
      uuid,
      gpu: `cuda:${i}`,
      waiters: 0,
      reservedBytes: 0,
      budgetBytes: null,
      freeBytes: null,
      availableBytes: null,
      slots: [
        { uuid, gpu: `cuda:${i}`, slot: 0, held: true, exclusive: false, reservedBytes: 0, holder: null },
      ],
    }));
    const text = formatLocks("/locks", "private", gpus, 0, () => true);
    expect(text).toContain("cuda:0  GPU-5c1e8f2a-1b2c-4d5e-8     0  ?");
    expect(text).toContain("cuda:1  GPU-5c1e8f2a-1b2c-4d5e-9     0  ?");
    expect(text).toContain("cuda:2  GPU-77777777                 0  ?");
  });

  it("the busy message names the GPU by id and its machine-unique short UUID", () => {
    const registry = [
      { gpu: "cuda:0", uuid: A },
      { gpu: "cuda:1", uuid: B },
    ];
    const { message } = busyGpuMessage(new GpuBusyError("cuda:1", []), registry);
    expect(message).toBe("GPU busy: cuda:1 (GPU-5c1e8f2a-1b2c-4d5e-9) is held by another process");
  });
});

describe("the run's views with look-alike GPUs", () => {
  const lookAlike = () => {
    const plan = makePlan();
    plan.registry = plan.registry.map((g, i) => ({ ...g, uuid: i === 0 ? A : B }));
    return plan;
  };

  it("the live view's lanes name each GPU by its machine-unique short UUID", async () => {
    const err = captureStream(120);
    const view = await createView("tui", {
      plan: lookAlike(),
      pipelines: ALL_PIPELINES,
      out: captureStream(),
      err,
      colorLevel: 0,
      columns: 120,
    });
    await view.close(failedSummary());
    const text = plainText(err.text());
    expect(text).toMatch(/^cuda:0 .*GPU-5c1e8f2a-1b2c-4d5e-8$/m);
    expect(text).toMatch(/^cuda:1 .*GPU-5c1e8f2a-1b2c-4d5e-9$/m);
  });

  it("the dry run names each pipeline's GPU by id and short UUID", () => {
    const plan = lookAlike();
    const dry: DryRun = {
      schema: "gpuplan/dry-run@1",
      bindings: [],
      plan: plan.name,
      run: "r",
      pipelines: [{ name: "train", gpus: ["cuda:1"], steps: [] }],
    };
    expect(formatDryRun(dry, plan.registry)).toContain("pipeline train on cuda:1 (GPU-5c1e8f2a-1b2c-4d5e-9)");
  });
});
