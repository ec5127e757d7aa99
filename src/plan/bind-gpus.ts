/**
 * Binding a plan's GPUs to the live ones, before anything starts. A plan names GPUs by what they
 * are (backend, model, memory, compute capability, MIG profile) as well as by UUID: the same UUID
 * is taken when it is there, else a free GPU of the same kind — so a plan compiled in CI against a
 * target, or on another machine of the same kind, runs here, and a cluster scheduler's GPUs (the
 * Slurm follower binds to the GPUs it was given) can stand in for the planned ones.
 *
 * Pure: the caller says which GPUs are live and which are busy; the result is the same for the
 * same inputs (replacements in PCI order, GPUs with all slots held last).
 */

/** A card's reported total may fall this far below what the plan says (nominal vs reported: an L4 sold as 24 GB reports 23,034 MiB, 6.3 % under 24 GiB). */
export const MEMORY_TOLERANCE = 0.07;

/** What a plan GPU is: what a replacement must match. */
export interface WantedGpu {
  /** The plan's device id (cuda:3, cuda:0/mig1). */
  id: string;
  uuid: string;
  name: string;
  backend: string;
  memoryBytes: number;
  /** Compute capability ("9.0") or gfx target ("gfx942"); null when the plan does not know it. */
  computeCapability: string | null;
}

/** A GPU of this machine, as detection sees it. */
export interface LiveGpu {
  id: string;
  uuid: string;
  name: string;
  backend: string;
  pciBusId: string | null;
  memoryBytes: number;
  computeCapability: string | null;
  /** Every slot of it is held by another gpuplan run: a replacement is picked elsewhere when possible. */
  busy: boolean;
}

export interface GpuBinding {
  /** The plan's device id. */
  planGpu: string;
  planUuid: string;
  /** The live GPU it runs on. */
  live: LiveGpu;
  /** True when the live GPU is not the planned UUID. */
  replaced: boolean;
}

/** `exact`: only the planned UUIDs; `auto`: UUID first, else a matching GPU. */
export type BindMode = "auto" | "exact";

export interface BindResult {
  bindings: GpuBinding[];
  /** Plan GPUs nothing live could stand in for. */
  unbound: WantedGpu[];
}

/** The MIG profile in a MIG device's name ("NVIDIA A100-SXM4-80GB MIG 3g.40gb" → "3g.40gb"). */
function migProfileOf(name: string): string | null {
  return /\bMIG (\S+)$/.exec(name.trim())?.[1] ?? null;
}

const sameModel = (a: string, b: string): boolean => a.trim().toLowerCase() === b.trim().toLowerCase();

/** Why `live` cannot stand in for `wanted`, or null when it can. */
export function mismatch(wanted: WantedGpu, live: LiveGpu): string | null {
  if (wanted.backend !== live.backend) return `backend ${live.backend}, not ${wanted.backend}`;
  // The name carries the model and, for a MIG device, its profile: both must be the same.
  if (!sameModel(wanted.name, live.name)) return `model ${live.name}, not ${wanted.name}`;
  if (migProfileOf(wanted.name) !== migProfileOf(live.name)) return "another MIG profile";
  if (
    wanted.computeCapability &&
    live.computeCapability &&
    wanted.computeCapability !== live.computeCapability
  )
    return `compute capability ${live.computeCapability}, not ${wanted.computeCapability}`;
  if (live.memoryBytes < wanted.memoryBytes * (1 - MEMORY_TOLERANCE)) return "less memory";
  return null;
}

const pciOrder = (a: LiveGpu, b: LiveGpu): number => {
  const ka = `${a.pciBusId ?? "~"}\0${a.id}`;
  const kb = `${b.pciBusId ?? "~"}\0${b.id}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** Bind every wanted GPU: its own UUID first (in any mode), then (auto) a free matching GPU in PCI order. */
export function bindGpus(wanted: readonly WantedGpu[], live: readonly LiveGpu[], mode: BindMode): BindResult {
  const taken = new Set<string>();
  const bound = new Map<string, GpuBinding>();
  for (const w of wanted) {
    const same = live.find((g) => g.uuid === w.uuid);
    if (same && !taken.has(same.uuid)) {
      taken.add(same.uuid);
      bound.set(w.id, { planGpu: w.id, planUuid: w.uuid, live: same, replaced: false });
    }
  }
  const unbound: WantedGpu[] = [];
  const candidates = [...live].sort((a, b) => Number(a.busy) - Number(b.busy) || pciOrder(a, b));
  for (const w of wanted) {
    if (bound.has(w.id)) continue;
    const pick = mode === "exact" ? undefined : candidates.find((g) => !taken.has(g.uuid) && !mismatch(w, g));
    if (!pick) {
      unbound.push(w);
      continue;
    }
    taken.add(pick.uuid);
    bound.set(w.id, { planGpu: w.id, planUuid: w.uuid, live: pick, replaced: true });
  }
  return { bindings: wanted.flatMap((w) => bound.get(w.id) ?? []), unbound };
}
