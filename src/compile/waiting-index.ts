/**
 * The list schedule's waiting GPU pipelines, indexed by the GPUs they may use, so that a round finds
 * the first pipeline (in priority order) that can start now in O(log n) per kind of GPU, without
 * looking at the ones that cannot. GPUs that every pipeline treats alike (eligible for the same
 * pipelines, with the same reservation) form one group. A pipeline of one GPU sits in one segment
 * tree per group it may use, valued by its reservation there: the tree's first entry within the
 * group's largest free budget (over its GPUs with a free slot that no exclusive step owns) can start.
 * A pipeline of m GPUs sits in one tree for its groups and m, valued by its reservation, which is
 * exact in the same way (the m-th largest free budget over those groups) when its reservation is
 * the same on all its GPUs. Only where it is not (a step without `vram` on GPUs of different sizes)
 * is the tree looser — its smallest reservation — and each entry found is checked; those checks are
 * bounded per round (MAX_PASSED_OVER), so that a round stays O(log n) per start however many such
 * pipelines wait, and only they can be passed by for it. So are pipelines of several GPUs past
 * MAX_MULTI_TREES distinct sets of groups, which share one looser tree per GPU count.
 */

export interface WaitingJob {
  gpus: number;
  eligible: readonly number[];
  reservation: readonly number[];
}

/** Checks of the looser trees a round may fail before they stop answering until the next round. */
const MAX_PASSED_OVER = 1024;

/**
 * Trees of several GPUs, one per distinct set of groups: past this many, a set gets one looser
 * tree per GPU count over every group. Every tree is looked at on every start, so `requires` that
 * give each pipeline its own set of GPUs (2,000 `gpus: 2` pipelines, each on its own 8 of 64)
 * made a tree each: 5.5 s where one shared tree takes ~0.1 s.
 */
const MAX_MULTI_TREES = 32;

interface Tree {
  /** The GPU groups its entries may use, ascending. */
  groups: number[];
  gpus: number;
  /** Whether an entry within its limit always starts (else each is checked). */
  exact: boolean;
  /** The schedule positions of its entries, ascending. */
  positions: Int32Array;
  values: MinTree;
}

export class WaitingIndex {
  private readonly trees: Tree[] = [];
  private readonly groupOf: Int32Array;
  private readonly groupCount: number;
  /** Per position, its entries: tree index and place in that tree. */
  private readonly memberStart: Int32Array;
  private readonly memberTree: Int32Array;
  private readonly memberAt: Int32Array;
  private passedOver = 0;
  /** Reused: each group's largest free budget. */
  private readonly most: Float64Array;
  /** Reused: each group's free budgets, kept only where a tree is for several GPUs. */
  private readonly byGroup: number[][];

  /** `jobs` in schedule (priority) order; each may use at least `gpus` GPUs of `gpuCount`. */
  constructor(jobs: readonly WaitingJob[], gpuCount: number) {
    this.groupOf = groupGpus(jobs, gpuCount);
    this.groupCount = Math.max(0, ...this.groupOf) + 1;
    type Draft = Omit<Tree, "positions" | "values"> & { positions: number[]; values: number[] };
    // Trees of one GPU by group; the others by groups, GPUs and exactness.
    const single = new Array<Draft | undefined>(this.groupCount);
    const byKey = new Map<string, Draft>();
    const draft = (groups: number[], gpus: number, exact: boolean): Draft => ({
      groups,
      gpus,
      exact,
      positions: [],
      values: [],
    });
    const addSingle = (pos: number, group: number, bytes: number) => {
      const t = single[group] ?? draft([group], 1, true);
      single[group] = t;
      t.positions.push(pos);
      t.values.push(bytes);
    };
    const everyGroup = Array.from({ length: this.groupCount }, (_, g) => g);
    const addMulti = (pos: number, groups: number[], gpus: number, exact: boolean, bytes: number) => {
      let key = `${groups.join(",")}:${gpus}:${exact}`;
      if (!byKey.has(key) && byKey.size >= MAX_MULTI_TREES) {
        // Looser: its limit is over every group's budgets, so each entry found is checked.
        key = `*:${gpus}`;
        groups = everyGroup;
        exact = false;
      }
      const t = byKey.get(key) ?? draft(groups, gpus, exact);
      byKey.set(key, t);
      t.positions.push(pos);
      t.values.push(bytes);
    };
    const seen = new Int32Array(this.groupCount).fill(-1);
    jobs.forEach((j, pos) => {
      // The groups it may use, each with its reservation there (the same on all of a group's GPUs).
      const groups: number[] = [];
      let least = Number.POSITIVE_INFINITY;
      let exact = true;
      // Once every group is seen the rest of its GPUs add nothing (20,000 pipelines × 64 GPUs).
      for (let k = 0, found = 0; k < j.eligible.length && found < this.groupCount; k++) {
        const group = this.groupOf[j.eligible[k]!]!;
        const bytes = j.reservation[k]!;
        if (seen[group] === pos) continue;
        seen[group] = pos;
        found++;
        if (j.gpus === 1) {
          addSingle(pos, group, bytes);
          continue;
        }
        groups.push(group);
        if (least !== Number.POSITIVE_INFINITY && bytes !== least) exact = false;
        least = Math.min(least, bytes);
      }
      if (j.gpus > 1)
        addMulti(
          pos,
          groups.sort((a, b) => a - b),
          j.gpus,
          exact,
          least,
        );
    });
    // Exact trees first: the looser ones are then searched only before the best position found.
    const drafts = [...single.filter((t) => t !== undefined), ...byKey.values()].sort(
      (a, b) => Number(b.exact) - Number(a.exact),
    );
    for (const t of drafts)
      this.trees.push({ ...t, positions: Int32Array.from(t.positions), values: new MinTree(t.values) });
    this.most = new Float64Array(this.groupCount);
    this.byGroup = this.trees.some((t) => t.gpus > 1)
      ? Array.from({ length: this.groupCount }, () => [])
      : [];
    // Each position's entries, in one flat list.
    const starts = new Int32Array(jobs.length + 1);
    for (const t of this.trees) for (const pos of t.positions) starts[pos + 1]!++;
    for (let i = 0; i < jobs.length; i++) starts[i + 1]! += starts[i]!;
    this.memberStart = starts;
    const fill = Int32Array.from(starts);
    this.memberTree = new Int32Array(starts[jobs.length]!);
    this.memberAt = new Int32Array(starts[jobs.length]!);
    this.trees.forEach((t, ti) => {
      t.positions.forEach((pos, at) => {
        const x = fill[pos]!++;
        this.memberTree[x] = ti;
        this.memberAt[x] = at;
      });
    });
  }

  /** A new round: the looser trees answer again. */
  startRound(): void {
    this.passedOver = 0;
  }

  /**
   * The first waiting position ≥ `from` that can start now, with what `place` says of it, or
   * undefined. `free[g]` is GPU g's free budget, or -1 when it cannot take a pipeline now (no free
   * slot, or an exclusive step owns it). `place` is the schedule's own check and choice of GPUs.
   */
  next<T>(
    from: number,
    free: readonly number[],
    place: (pos: number) => T | undefined,
  ): { pos: number; placed: T } | undefined {
    // The largest free budget per group, and (for trees of several GPUs) every group's budgets.
    const most = this.most.fill(-1);
    const byGroup = this.byGroup;
    for (const list of byGroup) list.length = 0;
    for (let g = 0; g < free.length; g++) {
      const bytes = free[g]!;
      if (bytes < 0) continue;
      const group = this.groupOf[g]!;
      if (bytes > most[group]!) most[group] = bytes;
      byGroup[group]?.push(bytes);
    }
    let best: { pos: number; placed: T } | undefined;
    for (const t of this.trees) {
      if (!t.exact && this.passedOver >= MAX_PASSED_OVER) continue;
      const bound = this.limit(t);
      if (bound < 0) continue;
      let at = t.values.first(lowerBound(t.positions, from), bound);
      while (at >= 0) {
        const pos = t.positions[at]!;
        if (best && pos >= best.pos) break;
        const placed = place(pos);
        if (placed !== undefined) {
          best = { pos, placed };
          break;
        }
        if (++this.passedOver >= MAX_PASSED_OVER) break;
        at = t.values.first(at + 1, bound);
      }
    }
    return best;
  }

  /** The most a tree's entry may reserve and still start: from the budgets `next` gathered. */
  private limit(t: Tree): number {
    if (t.gpus === 1) return this.most[t.groups[0]!]!;
    const byGroup = this.byGroup;
    return largest(
      t.groups.length === 1 ? byGroup[t.groups[0]!]! : t.groups.flatMap((g) => byGroup[g]!),
      t.gpus,
    );
  }

  remove(pos: number): void {
    for (let x = this.memberStart[pos]!; x < this.memberStart[pos + 1]!; x++)
      this.trees[this.memberTree[x]!]!.values.remove(this.memberAt[x]!);
  }
}

/**
 * Partitions the GPUs into groups that no job tells apart (each job may use all or none of a
 * group, with one reservation on all of it): refined job by job, group ids numbered by first GPU.
 */
function groupGpus(jobs: readonly WaitingJob[], gpuCount: number): Int32Array {
  const group = new Int32Array(gpuCount);
  let next = 1;
  for (const j of jobs) {
    if (j.eligible.length === gpuCount && isUniform(j.reservation)) continue;
    const split = new Map<string, number>();
    j.eligible.forEach((g, k) => {
      const key = `${group[g]!}:${j.reservation[k]!}`;
      let id = split.get(key);
      if (id === undefined) {
        id = next++;
        split.set(key, id);
      }
      group[g] = id;
    });
  }
  const renumber = new Map<number, number>();
  return group.map((id) => {
    let n = renumber.get(id);
    if (n === undefined) {
      n = renumber.size;
      renumber.set(id, n);
    }
    return n;
  });
}

function isUniform(xs: readonly number[]): boolean {
  for (let i = 1; i < xs.length; i++) if (xs[i] !== xs[0]) return false;
  return true;
}

/** The m-th largest of `list` (m small: a pipeline's GPUs), or -1 when it has fewer. */
function largest(list: readonly number[], m: number): number {
  if (list.length < m) return -1;
  const top: number[] = [];
  for (const x of list) {
    if (top.length === m && x <= top[m - 1]!) continue;
    let i = Math.min(top.length, m - 1);
    top[i] = x;
    for (; i > 0 && top[i - 1]! < x; i--) [top[i - 1], top[i]] = [x, top[i - 1]!];
  }
  return top[m - 1]!;
}

/** The first index whose position is ≥ from. */
function lowerBound(positions: Int32Array, from: number): number {
  let lo = 0;
  let hi = positions.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if (positions[mid]! < from) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/** Minimum over positions, with "first position ≥ from whose value ≤ limit" in O(log n). */
class MinTree {
  private readonly size: number;
  private readonly tree: Float64Array;

  constructor(values: readonly number[]) {
    let size = 1;
    while (size < values.length) size *= 2;
    this.size = size;
    this.tree = new Float64Array(2 * size).fill(Number.POSITIVE_INFINITY);
    values.forEach((v, i) => {
      this.tree[size + i] = v;
    });
    for (let i = size - 1; i >= 1; i--) this.tree[i] = Math.min(this.tree[2 * i]!, this.tree[2 * i + 1]!);
  }

  remove(pos: number): void {
    let i = this.size + pos;
    this.tree[i] = Number.POSITIVE_INFINITY;
    for (i >>= 1; i >= 1; i >>= 1) this.tree[i] = Math.min(this.tree[2 * i]!, this.tree[2 * i + 1]!);
  }

  first(from: number, limit: number): number {
    if (from >= this.size) return -1;
    return this.descend(1, 0, this.size, from, limit);
  }

  private descend(node: number, lo: number, hi: number, from: number, limit: number): number {
    if (hi <= from || this.tree[node]! > limit) return -1;
    if (hi - lo === 1) return lo;
    const mid = (lo + hi) >> 1;
    const left = this.descend(2 * node, lo, mid, from, limit);
    return left >= 0 ? left : this.descend(2 * node + 1, mid, hi, from, limit);
  }
}
