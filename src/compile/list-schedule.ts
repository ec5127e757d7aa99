/**
 * The estimated schedule: an event-driven list schedule that admits by memory. Pipelines are taken
 * longest first (bigger reservation first on ties); whenever a pipeline ends, every GPU with a free
 * slot starts the first waiting pipeline whose reservation fits the GPU's free budget, and a host
 * lane (max_parallel_pipelines) is free for it — however many waiting pipelines ahead of it cannot
 * (src/compile/waiting-index.ts; pipelines of several GPUs whose reservation differs between their
 * GPUs, or beyond 32 distinct sets of GPUs, are checked one by one, at most 1,024 a round). A pipeline goes to the GPU it fits that runs the
 * fewest pipelines, then the one it fills best (best-fit by memory), then the one given the fewest
 * so far, then PCI order. Host pipelines
 * take a lane only. Exclusive steps own their GPU: from such a pipeline's start, its GPU admits
 * nothing new for their estimated time (pipelines already running go on, as their shared steps
 * would beside the exclusive one's own shared steps). Deterministic: ties go to the pipeline's file order.
 * See docs/decisions/0012-memory-aware-packing.md for the alternatives measured.
 */
import { WaitingIndex } from "./waiting-index.js";

export interface ScheduleJob {
  workMs: number;
  /** GPUs it needs at once; 0 for a pipeline that runs on the host only. */
  gpus: number;
  /** Registry indexes of the GPUs it may run on, in registry order. */
  eligible: number[];
  /**
   * Its reservation on each GPU of `eligible` (same order). A job on several GPUs holds the least
   * of its GPUs' on each of them: a step sees one budget on all its cards, so it is what fits on
   * every one (an A100's slot share beside an L4's would be more than the L4 can give).
   */
  reservation: number[];
  /** How long its exclusive steps own the whole GPU (0: none). */
  exclusiveMs: number;
}

export interface ScheduleGpu {
  /** Memory pipelines may reserve together. */
  capacityBytes: number;
  slots: number;
}

export interface ListSchedule {
  startMs: number[];
  /** The registry indexes each job runs on (empty for host jobs and jobs that never fit). */
  placedOn: number[][];
  /** The reservation a job holds on each GPU of placedOn (the same on each). */
  reservedBytes: number[];
  makespanMs: number;
}

export function listSchedule(
  jobs: readonly ScheduleJob[],
  gpus: readonly ScheduleGpu[],
  lanes: number,
): ListSchedule {
  const n = jobs.length;
  const maxReservation = jobs.map((j) => Math.max(0, ...j.reservation));
  const order = jobs
    .map((_, i) => i)
    .sort((a, b) => jobs[b]!.workMs - jobs[a]!.workMs || maxReservation[b]! - maxReservation[a]! || a - b);
  const gpuJobs = order.filter((i) => jobs[i]!.gpus > 0 && jobs[i]!.eligible.length >= jobs[i]!.gpus);
  const hostJobs = order.filter((i) => jobs[i]!.gpus === 0);
  const rank = new Int32Array(n);
  order.forEach((job, r) => {
    rank[job] = r;
  });
  const waiting = new WaitingIndex(
    gpuJobs.map((i) => jobs[i]!),
    gpus.length,
  );

  const freeSlots = gpus.map((g) => g.slots);
  const freeBytes = gpus.map((g) => g.capacityBytes);
  const running = new Array<number>(gpus.length).fill(0);
  const assigned = new Array<number>(gpus.length).fill(0);
  const blocked = new Array<boolean>(gpus.length).fill(false);
  let freeLanes = Math.max(1, lanes);
  const startMs = new Array<number>(n).fill(0);
  const placedOn: number[][] = jobs.map(() => []);
  const reservedBytes = new Array<number>(n).fill(0);
  const events = new EventQueue();
  let makespanMs = 0;
  let hostNext = 0;

  /** The entries of a job's `eligible` it would start on now, or undefined when it cannot start. */
  const placeNow = (i: number): number[] | undefined => {
    const j = jobs[i]!;
    const fit: number[] = [];
    // Room for its own reservation on each GPU: never less than what a multi-GPU job ends up holding.
    j.eligible.forEach((g, k) => {
      if (blocked[g] || freeSlots[g]! <= 0 || freeBytes[g]! < j.reservation[k]!) return;
      fit.push(k);
    });
    if (fit.length < j.gpus) return undefined;
    // Fewest pipelines running first (spread), then the least memory left over (best fit), then the
    // fewest given so far (so GPUs the host lanes leave idle still get work), then PCI order.
    const better = (a: number, b: number) =>
      running[j.eligible[a]!]! - running[j.eligible[b]!]! ||
      freeBytes[j.eligible[a]!]! - j.reservation[a]! - (freeBytes[j.eligible[b]!]! - j.reservation[b]!) ||
      assigned[j.eligible[a]!]! - assigned[j.eligible[b]!]! ||
      a - b;
    if (j.gpus === 1) return [fit.reduce((a, b) => (better(b, a) < 0 ? b : a))];
    return fit
      .sort(better)
      .slice(0, j.gpus)
      .sort((a, b) => a - b);
  };

  const start = (i: number, t: number, ks: number[]): void => {
    const j = jobs[i]!;
    startMs[i] = t;
    freeLanes--;
    reservedBytes[i] = ks.length > 0 ? Math.min(...ks.map((k) => j.reservation[k]!)) : 0;
    for (const k of ks) {
      const g = j.eligible[k]!;
      freeSlots[g]!--;
      freeBytes[g]! -= reservedBytes[i]!;
      running[g]!++;
      assigned[g]!++;
      if (j.exclusiveMs > 0) blocked[g] = true;
      placedOn[i]!.push(g);
    }
    if (j.exclusiveMs > 0 && ks.length > 0) events.push(t + Math.min(j.exclusiveMs, j.workMs), i, 0);
    events.push(t + j.workMs, i, 1);
    makespanMs = Math.max(makespanMs, t + j.workMs);
  };

  const finish = (i: number, kind: number): void => {
    if (kind === 0) {
      for (const g of placedOn[i]!) blocked[g] = false;
      return;
    }
    for (const g of placedOn[i]!) {
      freeSlots[g]!++;
      running[g]!--;
      freeBytes[g]! += reservedBytes[i]!;
    }
    freeLanes++;
  };

  const placeAt = (pos: number) => placeNow(gpuJobs[pos]!);
  /** Each GPU's free budget, or -1 when it cannot take a pipeline now. */
  const free = new Array<number>(gpus.length);
  const freeNow = (): number[] => {
    for (let g = 0; g < gpus.length; g++) free[g] = blocked[g] || freeSlots[g]! <= 0 ? -1 : freeBytes[g]!;
    return free;
  };

  let t = 0;
  for (;;) {
    // One round at time t: resources only shrink within it, so one forward pass over the waiting list.
    let cursor = 0;
    let candidate: { pos: number; placed: number[] } | undefined;
    waiting.startRound();
    while (freeLanes > 0) {
      if (candidate === undefined && cursor < gpuJobs.length) {
        candidate = waiting.next(cursor, freeNow(), placeAt);
        if (!candidate) cursor = gpuJobs.length;
      }
      const host = hostNext < hostJobs.length ? hostJobs[hostNext]! : -1;
      const gpuJob = candidate ? gpuJobs[candidate.pos]! : -1;
      if (host < 0 && gpuJob < 0) break;
      if (gpuJob < 0 || (host >= 0 && rank[host]! < rank[gpuJob]!)) {
        start(host, t, []);
        hostNext++;
        continue;
      }
      start(gpuJob, t, candidate!.placed);
      waiting.remove(candidate!.pos);
      cursor = candidate!.pos + 1;
      candidate = undefined;
    }
    const next = events.peekTime();
    if (next === undefined) break;
    t = next;
    while (events.peekTime() === t) {
      const e = events.pop();
      finish(e.job, e.kind);
    }
  }
  return { startMs, placedOn, reservedBytes, makespanMs };
}

/** Ends of running jobs, earliest first (a binary heap); at equal times exclusive phases end first. */
class EventQueue {
  private readonly times: number[] = [];
  private readonly jobs: number[] = [];
  private readonly kinds: number[] = [];

  push(time: number, job: number, kind: number): void {
    this.times.push(time);
    this.jobs.push(job);
    this.kinds.push(kind);
    let i = this.times.length - 1;
    while (i > 0) {
      const up = (i - 1) >> 1;
      if (!this.before(i, up)) break;
      this.swap(i, up);
      i = up;
    }
  }

  peekTime(): number | undefined {
    return this.times[0];
  }

  pop(): { job: number; kind: number } {
    const top = { job: this.jobs[0]!, kind: this.kinds[0]! };
    const last = this.times.length - 1;
    this.swap(0, last);
    this.times.pop();
    this.jobs.pop();
    this.kinds.pop();
    let i = 0;
    for (;;) {
      const l = 2 * i + 1;
      const r = l + 1;
      let m = i;
      if (l < this.times.length && this.before(l, m)) m = l;
      if (r < this.times.length && this.before(r, m)) m = r;
      if (m === i) break;
      this.swap(i, m);
      i = m;
    }
    return top;
  }

  private before(a: number, b: number): boolean {
    return (
      this.times[a]! < this.times[b]! ||
      (this.times[a] === this.times[b] &&
        (this.kinds[a]! < this.kinds[b]! ||
          (this.kinds[a] === this.kinds[b] && this.jobs[a]! < this.jobs[b]!)))
    );
  }

  private swap(a: number, b: number): void {
    for (const xs of [this.times, this.jobs, this.kinds]) {
      const x = xs[a]!;
      xs[a] = xs[b]!;
      xs[b] = x;
    }
  }
}
