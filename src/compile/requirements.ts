/** Does a GPU satisfy a pipeline's `requires`? */

import type { GpuInfo } from "../inventory/types.js";
import type { Requirements } from "../pipeline/model.js";

/** Why a GPU fails the requirements, or undefined when it meets them. */
export function unmetRequirement(gpu: GpuInfo, r: Requirements): string | undefined {
  if (r.backend && gpu.backend !== r.backend) return `backend is ${gpu.backend}, not ${r.backend}`;
  if (r.minMemoryBytes !== null && gpu.memoryBytes < r.minMemoryBytes)
    return "has less memory than min_memory";
  if (
    r.computeCapability !== null &&
    !satisfiesComputeCapability(gpu.computeCapability, r.computeCapability)
  ) {
    return `compute capability ${gpu.computeCapability ?? "unknown"} does not satisfy ${r.computeCapability}`;
  }
  if (r.namePattern !== null && !globMatches(r.namePattern, gpu.name))
    return `name does not match ${r.namePattern}`;
  return undefined;
}

/** ">=8.0, <10" against "9.0". A non-numeric capability (AMD gfx targets) never satisfies one. */
export function satisfiesComputeCapability(cc: string | null, constraint: string): boolean {
  const have = cc !== null && /^\d+(\.\d+)?$/.test(cc) ? versionKey(cc) : undefined;
  if (have === undefined) return false;
  return constraint.split(",").every((part) => {
    const m = /^\s*(>=|<=|>|<|==|=)?\s*(\d+(?:\.\d+)?)\s*$/.exec(part);
    if (!m) return false;
    const want = versionKey(m[2]!);
    switch (m[1] ?? "==") {
      case ">=":
        return have >= want;
      case "<=":
        return have <= want;
      case ">":
        return have > want;
      case "<":
        return have < want;
      default:
        return have === want;
    }
  });
}

// "8.6" → 806 so that 8.10 (if it ever exists) sorts after 8.9.
const versionKey = (v: string): number => {
  const [major, minor = "0"] = v.split(".");
  return Number(major) * 100 + Number(minor);
};

/** Case-insensitive glob with * and ?; a pattern without wildcards matches as a substring. */
export function globMatches(pattern: string, text: string): boolean {
  if (!/[*?]/.test(pattern)) return text.toLowerCase().includes(pattern.toLowerCase());
  const re = pattern
    .replace(/[.+^${}()|[\]\\]/g, "\\$&")
    .replaceAll("*", ".*")
    .replaceAll("?", ".");
  return new RegExp(`^${re}$`, "i").test(text);
}
