import { describe, expect, it } from "vitest";
import { globMatches, satisfiesComputeCapability, unmetRequirement } from "../../src/compile/requirements.js";
import { inventory } from "../helpers/inventory.js";

describe("requirements", () => {
  it("compares compute capabilities numerically", () => {
    expect(satisfiesComputeCapability("8.0", ">=8.0")).toBe(true);
    expect(satisfiesComputeCapability("7.5", ">=8.0")).toBe(false);
    expect(satisfiesComputeCapability("9.0", ">=8.0, <10")).toBe(true);
    expect(satisfiesComputeCapability("8.6", ">8.0")).toBe(true);
    expect(satisfiesComputeCapability("8.6", "8.6")).toBe(true);
    expect(satisfiesComputeCapability("8.6", "==8.9")).toBe(false);
    expect(satisfiesComputeCapability("8.10", ">8.9")).toBe(true);
    expect(satisfiesComputeCapability("10", ">=9.0")).toBe(true);
  });

  it("never satisfies a constraint with an AMD gfx target or an unknown capability", () => {
    expect(satisfiesComputeCapability("gfx942", ">=8.0")).toBe(false);
    expect(satisfiesComputeCapability(null, ">=0")).toBe(false);
  });

  it("matches names by case-insensitive glob, or by substring without wildcards", () => {
    expect(globMatches("*A100*", "NVIDIA A100-SXM4-80GB")).toBe(true);
    expect(globMatches("*a100*", "NVIDIA A100-SXM4-80GB")).toBe(true);
    expect(globMatches("NVIDIA H?00*", "NVIDIA H100 80GB HBM3")).toBe(true);
    expect(globMatches("*H100", "NVIDIA H100 80GB HBM3")).toBe(false);
    expect(globMatches("h100", "NVIDIA H100 80GB HBM3")).toBe(true);
    expect(globMatches("A100 (40GB)", "A100 (40GB)")).toBe(true);
  });

  it("says which requirement a GPU fails", () => {
    const [g] = inventory([{ name: "NVIDIA L4", memory: "24GiB", compute_capability: "8.9" }]).gpus;
    const none = { backend: null, minMemoryBytes: null, computeCapability: null, namePattern: null };
    expect(unmetRequirement(g!, none)).toBeUndefined();
    expect(unmetRequirement(g!, { ...none, backend: "rocm" })).toBe("backend is cuda, not rocm");
    expect(unmetRequirement(g!, { ...none, minMemoryBytes: 40 * 1024 ** 3 })).toBe(
      "has less memory than min_memory",
    );
    expect(unmetRequirement(g!, { ...none, computeCapability: ">=9.0" })).toContain(
      "8.9 does not satisfy >=9.0",
    );
    expect(unmetRequirement(g!, { ...none, namePattern: "*A100*" })).toBe("name does not match *A100*");
  });
});
