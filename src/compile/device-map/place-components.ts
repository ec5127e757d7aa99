/**
 * Automatic placement of sized components, in accelerate's vocabulary. Pure arithmetic on
 * bytes: the caller turns the outcome into device ids and problems.
 */

/** A device with the bytes still free on it (Infinity when unbounded: unknown host memory, disk). */
export interface Bin {
  id: string;
  room: number;
}

export interface SizedComponent {
  name: string;
  bytes: number;
}

export interface Placement {
  /** component -> bin id, for those that found room. */
  placed: Map<string, string>;
  /** Components that fit nowhere, in declaration order. */
  unplaced: string[];
}

/**
 * Fill the bins in order, as accelerate's `infer_auto_device_map` does: a component that does
 * not fit moves the cursor on for good, so the map reads in device order (GPU 0, 1, …, cpu,
 * disk) and never sends a later component back to an earlier device. Mutates `bins[].room`.
 */
export function placeSequential(components: readonly SizedComponent[], bins: Bin[]): Placement {
  const placed = new Map<string, string>();
  const unplaced: string[] = [];
  let cursor = 0;
  for (const component of components) {
    const index = bins.findIndex((bin, i) => i >= cursor && bin.room >= component.bytes);
    const bin = bins[index];
    // A component too big for every remaining bin leaves the cursor where it was, so one
    // oversized component does not also condemn the small ones declared after it.
    if (bin === undefined) {
      unplaced.push(component.name);
      continue;
    }
    cursor = index;
    bin.room -= component.bytes;
    placed.set(component.name, bin.id);
  }
  return { placed, unplaced };
}

/**
 * Spread over the GPUs: largest component first (declaration order breaks ties) onto the GPU
 * with the most free room (lowest index breaks ties); what fits on no GPU goes to the first
 * spill bin (cpu, then disk) with room. Mutates the rooms.
 */
export function placeBalanced(components: readonly SizedComponent[], gpus: Bin[], spill: Bin[]): Placement {
  const placed = new Map<string, string>();
  const unplacedSet = new Set<string>();
  // Array.prototype.sort is stable, so equal sizes keep declaration order.
  const bySize = [...components].sort((a, b) => b.bytes - a.bytes);
  for (const component of bySize) {
    const roomiest = gpus.reduce<Bin | undefined>(
      (best, bin) => (best && best.room >= bin.room ? best : bin),
      undefined,
    );
    const bin =
      roomiest && roomiest.room >= component.bytes
        ? roomiest
        : spill.find((candidate) => candidate.room >= component.bytes);
    if (bin === undefined) {
      unplacedSet.add(component.name);
      continue;
    }
    bin.room -= component.bytes;
    placed.set(component.name, bin.id);
  }
  const unplaced = components.map((c) => c.name).filter((name) => unplacedSet.has(name));
  return { placed, unplaced };
}
