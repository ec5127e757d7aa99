import { describe, expect, it } from "vitest";
import { gfxTargetFromArchName, gfxTargetFromVersion } from "../../src/detect/gfx.js";
import { comparePciBusId, formatBdfId, normalizePciBusId } from "../../src/detect/pci.js";
import { childEnvironment } from "../../src/detect/spawn-child.js";
import { formatAmdUniqueId, formatNvidiaUuid } from "../../src/detect/uuid.js";

describe("PCI bus ids", () => {
  it.each([
    ["00000000:3B:00.0", "0000:3b:00.0"],
    ["0000:3b:00.0", "0000:3b:00.0"],
    ["3b:00.0", "0000:3b:00.0"],
    ["00000001:C1:1F.7", "0001:c1:1f.7"],
    ["garbage", null],
    ["", null],
  ])("normalize %j → %j", (text, id) => {
    expect(normalizePciBusId(text)).toBe(id);
  });

  it("decodes a ROCm SMI BDFID (domain << 32 | bus << 8 | device << 3 | function), ignoring the partition bits", () => {
    expect(formatBdfId((1n << 32n) | (0xc1n << 8n) | (0x1fn << 3n) | 7n)).toBe("0001:c1:1f.7");
    expect(formatBdfId((0x3n << 28n) | (0x05n << 8n))).toBe("0000:05:00.0");
  });

  it("orders by bus id with unknown ones last", () => {
    const ids = ["0000:c1:00.0", null, "0000:05:00.0", "0000:83:00.0"];
    expect([...ids].sort(comparePciBusId)).toEqual(["0000:05:00.0", "0000:83:00.0", "0000:c1:00.0", null]);
  });
});

describe("UUIDs and gfx targets", () => {
  it("formats CUDA's 16 bytes the way NVML prints them", () => {
    const bytes = Uint8Array.from({ length: 16 }, (_, i) => i * 17);
    expect(formatNvidiaUuid(bytes)).toBe("GPU-00112233-4455-6677-8899-aabbccddeeff");
    expect(formatNvidiaUuid(bytes, "MIG")).toMatch(/^MIG-00112233-/);
  });

  it("names an AMD unique id like ROCr does", () => {
    expect(formatAmdUniqueId(0x5f2c6a1d4e3b7a90n)).toBe("GPU-5f2c6a1d4e3b7a90");
    expect(formatAmdUniqueId(0x1n)).toBe("GPU-0000000000000001");
  });

  it.each([
    [90402, "gfx942"],
    [90010, "gfx90a"],
    [110000, "gfx1100"],
    [100300, "gfx1030"],
    [0, null],
    [null, null],
  ])("KFD gfx_target_version %j → %j", (v, gfx) => {
    expect(gfxTargetFromVersion(v)).toBe(gfx);
  });

  it("keeps the target of a HIP gcnArchName", () => {
    expect(gfxTargetFromArchName("gfx90a:sramecc+:xnack-")).toBe("gfx90a");
    expect(gfxTargetFromArchName("")).toBeNull();
  });
});

describe("the probe child's environment", () => {
  it("drops the visibility variables, NODE_OPTIONS and NODE_EXTRA_CA_CERTS, keeps the rest", () => {
    const parent = {
      PATH: "/usr/bin",
      LD_LIBRARY_PATH: "/opt/lib",
      CUDA_VISIBLE_DEVICES: "0",
      CUDA_DEVICE_ORDER: "PCI_BUS_ID",
      ROCR_VISIBLE_DEVICES: "1",
      HIP_VISIBLE_DEVICES: "1",
      GPU_DEVICE_ORDINAL: "0",
      NODE_OPTIONS: "--inspect",
      NODE_EXTRA_CA_CERTS: "/etc/ssl/certs/ca-certificates.crt",
    };
    expect(childEnvironment(parent)).toEqual({ PATH: "/usr/bin", LD_LIBRARY_PATH: "/opt/lib" });
    expect(parent.NODE_OPTIONS).toBe("--inspect");
  });
});
