/**
 * A fingerprint of the hardware facts a plan depends on. Free memory, temperatures and the like
 * change every second and are left out, so the fingerprint only changes when the machine does.
 */

import { sha256Hex } from "../text/sha256.js";
import type { Inventory } from "./types.js";

export function inventoryFingerprint(inv: Inventory): string {
  const facts = {
    cpu: { usableCores: inv.cpu.usableCores, memoryBytes: inv.cpu.memoryBytes },
    gpus: inv.gpus.map((g) => ({
      id: g.id,
      uuid: g.uuid,
      name: g.name,
      backend: g.backend,
      memoryBytes: g.memoryBytes,
      computeCapability: g.computeCapability,
      mig: g.mig,
    })),
  };
  return `sha256:${sha256Hex(JSON.stringify(facts))}`;
}
