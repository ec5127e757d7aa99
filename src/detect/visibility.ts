/**
 * What a process started here would see, from the variables the runtimes read:
 * - CUDA_VISIBLE_DEVICES: indices in CUDA's order (PCI order under CUDA_DEVICE_ORDER=PCI_BUS_ID,
 *   else the driver's fastest-first order when known), full or prefix `GPU-` UUIDs, `MIG-` UUIDs;
 *   empty means no GPU; CUDA stops at the first entry it cannot use (so `NoDevFiles`, `-1` or an
 *   out-of-range index end the list).
 * - AMD: ROCR_VISIBLE_DEVICES (indices or UUIDs) first, then HIP_VISIBLE_DEVICES re-indexing what
 *   is left — or, when it is unset, CUDA_VISIBLE_DEVICES (HIP honours it on AMD), then
 *   GPU_DEVICE_ORDINAL. Setting both layers is how people hide every AMD GPU by accident.
 * Pure functions: the table tests in test/detect/visibility.test.ts pin these rules.
 */
import type { GpuInfo, Visibility } from "../inventory/types.js";

const VISIBILITY_VARIABLES = [
  "CUDA_VISIBLE_DEVICES",
  "CUDA_DEVICE_ORDER",
  "ROCR_VISIBLE_DEVICES",
  "HIP_VISIBLE_DEVICES",
  "GPU_DEVICE_ORDINAL",
] as const;

/** A selectable device: a physical GPU with its MIG instances (ids and UUIDs). */
export interface SelectableGpu {
  id: string;
  uuid: string;
  migs: { id: string; uuid: string; gpuInstanceId?: number; computeInstanceId?: number }[];
}

export interface Selection {
  /** Ids made visible, in the order the variable lists them (MIG instances after their parent). */
  ids: string[];
  /** The first entry the runtime would reject, where it stopped reading; null when all were used. */
  stoppedAt: string | null;
}

/** Unique case-insensitive prefix match, as CUDA accepts shortened UUIDs. */
function byPrefix<T extends { uuid: string }>(items: T[], entry: string): T | null {
  const wanted = entry.toLowerCase();
  const exact = items.find((i) => i.uuid.toLowerCase() === wanted);
  if (exact) return exact;
  const hits = items.filter((i) => i.uuid.toLowerCase().startsWith(wanted));
  return hits.length === 1 ? hits[0]! : null;
}

const entries = (value: string): string[] =>
  value.trim() === "" ? [] : value.split(",").map((e) => e.trim());

/**
 * Whether CUDA_VISIBLE_DEVICES picks a device by index in CUDA's own order (the driver's, unless
 * CUDA_DEVICE_ORDER=PCI_BUS_ID): only then does narrowing need the CUDA probe's enumeration
 * beside NVML's. UUIDs, an empty value or none at all do not.
 */
export function usesCudaOrder(env: NodeJS.ProcessEnv): boolean {
  const value = env.CUDA_VISIBLE_DEVICES;
  if (value === undefined || env.CUDA_DEVICE_ORDER === "PCI_BUS_ID") return false;
  return entries(value).some((e) => /^\d+$/.test(e));
}

/** Apply CUDA_VISIBLE_DEVICES to devices listed in CUDA order. */
export function selectCudaDevices(value: string, ordered: SelectableGpu[]): Selection {
  const ids: string[] = [];
  const add = (...more: string[]) => {
    for (const id of more) if (!ids.includes(id)) ids.push(id);
  };
  for (const entry of entries(value)) {
    let gpu: SelectableGpu | null = null;
    if (/^\d+$/.test(entry)) gpu = ordered[Number(entry)] ?? null;
    else if (/^GPU-/i.test(entry)) gpu = byPrefix(ordered, entry);
    else if (/^MIG-/i.test(entry)) {
      const all = ordered.flatMap((g) => g.migs.map((m) => ({ ...m, parent: g })));
      // The pre-R470 form MIG-GPU-<uuid>/<gi>/<ci> names the parent and the instance ids.
      const legacy = /^MIG-(GPU-[^/]+)\/(\d+)\/(\d+)$/i.exec(entry);
      const mig = legacy
        ? all.find(
            (m) =>
              m.parent.uuid.toLowerCase() === legacy[1]!.toLowerCase() &&
              m.gpuInstanceId === Number(legacy[2]) &&
              m.computeInstanceId === Number(legacy[3]),
          )
        : byPrefix(all, entry);
      if (!mig) return { ids, stoppedAt: entry };
      add(mig.parent.id, mig.id);
      continue;
    }
    if (!gpu) return { ids, stoppedAt: entry };
    add(gpu.id, ...gpu.migs.map((m) => m.id));
  }
  return { ids, stoppedAt: null };
}

/** Apply an AMD list: indices into `ordered`, and (ROCR only) UUIDs. */
export function selectAmdDevices(value: string, ordered: SelectableGpu[], allowUuids: boolean): Selection {
  const ids: string[] = [];
  for (const entry of entries(value)) {
    let gpu: SelectableGpu | null = null;
    if (/^\d+$/.test(entry)) gpu = ordered[Number(entry)] ?? null;
    else if (allowUuids && /^GPU-/i.test(entry)) gpu = byPrefix(ordered, entry);
    if (!gpu) return { ids, stoppedAt: entry };
    if (!ids.includes(gpu.id)) ids.push(gpu.id);
  }
  return { ids, stoppedAt: null };
}

/** Physical GPUs of one backend with their MIG instances, sorted by `key`. */
function selectable(
  gpus: GpuInfo[],
  backend: GpuInfo["backend"],
  key: (g: GpuInfo) => number,
): SelectableGpu[] {
  return gpus
    .filter((g) => g.backend === backend && !g.mig?.parentUuid)
    .sort((a, b) => key(a) - key(b))
    .map((g) => ({
      id: g.id,
      uuid: g.uuid,
      migs: gpus
        .filter((m) => m.mig?.parentUuid === g.uuid && m.id.startsWith(`${g.id}/`))
        .map((m) => ({
          id: m.id,
          uuid: m.uuid,
          ...(m.mig?.gpuInstanceId !== undefined ? { gpuInstanceId: m.mig.gpuInstanceId } : {}),
          ...(m.mig?.computeInstanceId !== undefined ? { computeInstanceId: m.mig.computeInstanceId } : {}),
        })),
    }));
}

export interface VisibilityResult {
  gpus: GpuInfo[];
  visibility: Visibility;
  /** One line per variable that changed something, for the human output. */
  notes: string[];
}

/** Narrow `gpus` (merged, every GPU on the host) to what the environment lets a process see. */
export function applyVisibility(gpus: GpuInfo[], env: NodeJS.ProcessEnv, all = false): VisibilityResult {
  const variables: Record<string, string> = {};
  for (const name of VISIBILITY_VARIABLES) if (env[name] !== undefined) variables[name] = env[name]!;
  if (all)
    return { gpus, visibility: { applied: false, narrowedBy: [], variables, hiddenGpus: 0 }, notes: [] };

  const visible = new Set(gpus.map((g) => g.id));
  const narrowedBy: string[] = [];
  const notes: string[] = [];
  const restrict = (variable: string, backend: GpuInfo["backend"], selection: Selection) => {
    const before = visible.size;
    for (const g of gpus) {
      if (g.backend === backend && !selection.ids.includes(g.id)) visible.delete(g.id);
    }
    const hidden = before - visible.size;
    if (hidden > 0 && !narrowedBy.includes(variable)) narrowedBy.push(variable);
    const stop = selection.stoppedAt === null ? "" : ` (stops at "${selection.stoppedAt}")`;
    notes.push(`${variable}=${env[variable]} hides ${hidden} of the ${backend} devices${stop}`);
  };

  const cudaValue = env.CUDA_VISIBLE_DEVICES;
  if (cudaValue !== undefined && gpus.some((g) => g.backend === "cuda")) {
    const pciOrder = env.CUDA_DEVICE_ORDER === "PCI_BUS_ID";
    const ordered = selectable(gpus, "cuda", (g) => (pciOrder ? g.index! : (g.cudaIndex ?? 1000 + g.index!)));
    restrict("CUDA_VISIBLE_DEVICES", "cuda", selectCudaDevices(cudaValue, ordered));
  }

  if (gpus.some((g) => g.backend === "rocm")) {
    let ordered = selectable(gpus, "rocm", (g) => g.hipIndex ?? 1000 + g.index!);
    const rocr = env.ROCR_VISIBLE_DEVICES;
    if (rocr !== undefined) {
      const selection = selectAmdDevices(rocr, ordered, true);
      restrict("ROCR_VISIBLE_DEVICES", "rocm", selection);
      // What ROCr exposes is re-indexed from 0 in the listed order for the HIP layer.
      ordered = selection.ids.map((id) => ordered.find((g) => g.id === id)!);
    }
    const hipVariable = (["HIP_VISIBLE_DEVICES", "CUDA_VISIBLE_DEVICES", "GPU_DEVICE_ORDINAL"] as const).find(
      (v) => env[v] !== undefined && env[v] !== "",
    );
    if (hipVariable) restrict(hipVariable, "rocm", selectAmdDevices(env[hipVariable]!, ordered, false));
  }

  const kept = gpus.filter((g) => visible.has(g.id));
  return {
    gpus: kept,
    visibility: { applied: true, narrowedBy, variables, hiddenGpus: gpus.length - kept.length },
    notes,
  };
}
