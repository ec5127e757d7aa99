/**
 * GPUs a vendor library reports under one UUID cannot be told apart, and gpuplan names every GPU
 * by its UUID: the slot lock's file, a plan's binding, CUDA_VISIBLE_DEVICES. Two cards under one
 * would share one lock file and stand in for each other, so neither is planned on (nor their MIG
 * instances), and a note says why. A driver bug or a fake library; `nvidia-smi -L` shows them.
 */
import type { GpuInfo } from "../inventory/types.js";
import { escapeText } from "../text/safe-text.js";
import { uuidKey } from "./merge.js";

export function dropDuplicateUuids(gpus: readonly GpuInfo[]): { gpus: GpuInfo[]; notes: string[] } {
  const byUuid = new Map<string, GpuInfo[]>();
  for (const g of gpus) {
    // As merge.ts matches them: without their GPU-/MIG- prefix, in lower case.
    const key = uuidKey(g.uuid) ?? "";
    const list = byUuid.get(key);
    if (list) list.push(g);
    else byUuid.set(key, [g]);
  }
  const shared = new Set<string>();
  const notes: string[] = [];
  for (const [key, list] of byUuid) {
    if (list.length < 2) continue;
    shared.add(key);
    notes.push(
      `${list.length} GPUs (${list.map((g) => g.id).join(", ")}) report one UUID, ${escapeText(list[0]!.uuid)}: gpuplan cannot tell them apart and plans on none of them`,
    );
  }
  if (shared.size === 0) return { gpus: [...gpus], notes };
  const kept = gpus.filter(
    (g) =>
      !shared.has(uuidKey(g.uuid) ?? "") &&
      !(g.mig?.parentUuid && shared.has(uuidKey(g.mig.parentUuid) ?? "")),
  );
  return { gpus: kept, notes };
}
