// The pure binding core (src/plan/bind-gpus.ts): UUID first, else a free GPU of the same kind in
// PCI order, busy GPUs last; --bind exact takes no replacement.
import { describe, expect, it } from "vitest";
import { bindGpus, type LiveGpu, mismatch, type WantedGpu } from "../../src/plan/bind-gpus.js";
import { compileText } from "../helpers/inventory.js";

const H100 = "NVIDIA H100 80GB HBM3";
const H100_BYTES = 81559 * 1024 ** 2;
const want = (id: string, uuid: string, name = H100, memoryBytes = H100_BYTES): WantedGpu => ({
  id,
  uuid,
  name,
  backend: "cuda",
  memoryBytes,
  computeCapability: name.startsWith(H100) ? "9.0" : "8.9",
});
const live = (id: string, uuid: string, pci: string, extra: Partial<LiveGpu> = {}): LiveGpu => ({
  id,
  uuid,
  name: H100,
  backend: "cuda",
  pciBusId: pci,
  memoryBytes: H100_BYTES,
  computeCapability: "9.0",
  busy: false,
  ...extra,
});
const picked = (r: ReturnType<typeof bindGpus>) =>
  r.bindings.map((b) => [b.planGpu, b.live.uuid, b.replaced]);

describe("bindGpus", () => {
  it("keeps a planned UUID that is here, whatever its index now, and fills the rest in PCI order", () => {
    const r = bindGpus(
      [want("cuda:0", "GPU-a"), want("cuda:1", "GPU-b")],
      [
        live("cuda:0", "GPU-y", "0000:c1:00.0"),
        live("cuda:1", "GPU-x", "0000:18:00.0"),
        live("cuda:2", "GPU-b", "0000:2a:00.0"),
      ],
      "auto",
    );
    expect(picked(r)).toEqual([
      ["cuda:0", "GPU-x", true],
      ["cuda:1", "GPU-b", false],
    ]);
    expect(r.unbound).toEqual([]);
  });

  it("skips GPUs whose slots are all busy when a free one of the kind is left, and takes them when not", () => {
    const gpus = [
      live("cuda:0", "GPU-x", "0000:18:00.0", { busy: true }),
      live("cuda:1", "GPU-y", "0000:2a:00.0"),
    ];
    expect(picked(bindGpus([want("cuda:0", "GPU-a")], gpus, "auto"))).toEqual([["cuda:0", "GPU-y", true]]);
    expect(picked(bindGpus([want("cuda:0", "GPU-a"), want("cuda:1", "GPU-b")], gpus, "auto"))).toEqual([
      ["cuda:0", "GPU-y", true],
      ["cuda:1", "GPU-x", true],
    ]);
  });

  it("exact takes only the planned UUIDs", () => {
    const r = bindGpus(
      [want("cuda:0", "GPU-a"), want("cuda:1", "GPU-b")],
      [live("cuda:0", "GPU-b", "0000:18:00.0"), live("cuda:1", "GPU-z", "0000:2a:00.0")],
      "exact",
    );
    expect(picked(r)).toEqual([["cuda:1", "GPU-b", false]]);
    expect(r.unbound.map((w) => w.id)).toEqual(["cuda:0"]);
  });

  it("a replacement is the same backend, model, MIG profile and capability, with the memory (within the nominal-vs-reported tolerance)", () => {
    const w = want("cuda:0", "GPU-a");
    expect(mismatch(w, live("cuda:0", "x", "p"))).toBeNull();
    expect(mismatch(w, live("cuda:0", "x", "p", { memoryBytes: 80 * 1e9 }))).toBeNull(); // 74.5 GiB: 6.5 % under
    expect(mismatch(w, live("cuda:0", "x", "p", { memoryBytes: 40 * 1024 ** 3 }))).toBe("less memory");
    expect(mismatch(w, live("cuda:0", "x", "p", { name: "NVIDIA A100-SXM4-80GB" }))).toMatch(/^model/);
    expect(mismatch(w, live("cuda:0", "x", "p", { backend: "rocm" }))).toMatch(/^backend/);
    expect(mismatch(w, live("cuda:0", "x", "p", { computeCapability: "9.1" }))).toMatch(
      /^compute capability/,
    );
    const mig = want("cuda:2/mig0", "MIG-a", `${H100} MIG 2g.20gb`, 21139292160);
    expect(
      mismatch(
        mig,
        live("cuda:5/mig1", "MIG-z", "p", { name: `${H100} MIG 2g.20gb`, memoryBytes: 21139292160 }),
      ),
    ).toBeNull();
    expect(
      mismatch(
        mig,
        live("cuda:5/mig1", "MIG-z", "p", { name: `${H100} MIG 3g.40gb`, memoryBytes: 42278584320 }),
      ),
    ).not.toBeNull();
  });

  it("a mixed plan binds each GPU to one of its own model; what is short stays unbound", () => {
    const L4 = "NVIDIA L4";
    const l4 = (id: string, uuid: string, pci: string) =>
      live(id, uuid, pci, { name: L4, memoryBytes: 23034 * 1024 ** 2, computeCapability: "8.9" });
    const r = bindGpus(
      [
        want("cuda:0", "GPU-a"),
        want("cuda:1", "GPU-b", L4, 23034 * 1024 ** 2),
        want("cuda:2", "GPU-c", L4, 23034 * 1024 ** 2),
      ],
      [l4("cuda:0", "GPU-l", "0000:18:00.0"), live("cuda:1", "GPU-h", "0000:2a:00.0")],
      "auto",
    );
    expect(picked(r)).toEqual([
      ["cuda:0", "GPU-h", true],
      ["cuda:1", "GPU-l", true],
    ]);
    expect(r.unbound.map((w) => w.id)).toEqual(["cuda:2"]);
  });
});

describe("built-in targets describe cards as their driver reports them", () => {
  it("a dgx-h100 plan promises budgets a real H100 80GB HBM3 (NVML: 81,559 MiB) holds, with no tolerance needed", () => {
    const r = compileText(
      "version: 1\npipelines:\n  - name: p\n    steps:\n      - { id: s, run: [python3, s.py], memory: torch, vram: 8GiB }\n",
      "dgx-h100",
    );
    const nvmlTotal = 81559 * 1024 ** 2;
    for (const e of r.plan!.registry) {
      expect(e.memoryBytes).toBe(nvmlTotal);
      expect(e.memoryBudgetBytes).toBeLessThanOrEqual(
        Math.floor(nvmlTotal * r.plan!.settings.memoryFraction),
      );
      expect(e.computeCapability).toBe("9.0");
    }
  });
});
