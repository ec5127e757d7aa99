/**
 * Peak VRAM per attempt, from per-process readings: while GPU attempts run, memory is read every
 * interval (the same probe as the snapshots: NVML in the detect child), each process the driver
 * lists is matched to the attempt whose process group it is in (its pgrp in /proc, since a step
 * and what it starts share its group), and the most an attempt's processes held at once on its
 * GPUs is its peak: `peakVramBytes` on its gpu.step.end, what `compile --history` learns from.
 * An attempt shorter than the first reading (a quarter of the interval) has no peak; neither
 * has one where the driver does not list processes or lists pids of another pid namespace.
 * A warm worker serves task after task in one process group, most of them shorter than that:
 * each task on a worker that was warm already starts from what the worker's group last held.
 */
import { readFile } from "node:fs/promises";
import type { GpuMemory } from "../record/memory-snapshot.js";

/** Reads a process's group id; null when it is gone (or not ours to see). */
export type ReadProcessGroup = (pid: number) => Promise<number | null>;

async function readProcessGroup(pid: number): Promise<number | null> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // pid (comm) state ppid pgrp …: comm may hold spaces and parentheses, so count from the last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    const pgrp = Number(fields[2]);
    return Number.isInteger(pgrp) && pgrp > 0 ? pgrp : null;
  } catch {
    return null;
  }
}

interface Watched {
  pgid: number;
  /** A warm worker's group, which outlives the attempt: what it held is kept for the next. */
  worker: boolean;
  uuids: ReadonlySet<string>;
  peak: number | null;
}

/** Warm workers' groups remembered at most (a run keeps a few; cold workers each leave one). */
const REMEMBERED_GROUPS = 256;

export class VramWatch {
  private readonly watched = new Map<string, Watched>();
  /** What each worker's group held in the latest reading that listed it (its fullest GPU). */
  private readonly lastSeen = new Map<number, number>();
  private timer: NodeJS.Timeout | undefined;
  private reading: Promise<void> | null = null;
  /** Bumped when the readings stop: a reading that was in flight then does not schedule the next. */
  private generation = 0;

  /** `readFresh`: a reading taken after the call (`read` may answer one a little older). */
  constructor(
    private readonly read: () => Promise<GpuMemory[] | null>,
    private readonly intervalMs = 1000,
    private readonly groupOf: ReadProcessGroup = readProcessGroup,
    private readonly readFresh: () => Promise<GpuMemory[] | null> = read,
  ) {}

  /**
   * Follow the attempt `key`, whose process group is `pgid`, on the GPUs `uuids`. `worker`: the
   * group is a warm worker's, started for this attempt (`new`) or serving it after earlier ones
   * (`reused`: what it last held counts from the start).
   */
  start(key: string, pgid: number, uuids: readonly string[], worker?: "new" | "reused"): void {
    if (worker !== "reused") this.lastSeen.delete(pgid);
    this.watched.set(key, {
      pgid,
      worker: worker !== undefined,
      uuids: new Set(uuids),
      peak: this.lastSeen.get(pgid) ?? null,
    });
    if (!this.timer) this.schedule(Math.max(50, Math.round(this.intervalMs / 4)));
  }

  /**
   * One fresh reading now for what is watched, waited for unless `signal` aborts first. For a warm
   * worker's first task, before the worker serves the next: its model lands on the GPU at the end of
   * loading, often after the last reading (on an H100, PyTorch's context appeared under a second
   * before ready, readings a second apart), and the quick tasks after it start from what this finds.
   */
  async readNow(signal?: AbortSignal): Promise<void> {
    if (this.watched.size === 0 || signal?.aborted) return;
    const reading = this.sample(true);
    if (!signal) return reading;
    await new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener("abort", done);
        resolve();
      };
      signal.addEventListener("abort", done, { once: true });
      void reading.then(done, done);
    });
  }

  /** Stop following `key`: the most its processes held at once in a reading, or null when no reading saw them. */
  stop(key: string): number | null {
    const w = this.watched.get(key);
    this.watched.delete(key);
    // A plain step's group ends with it; only a worker's is met again.
    if (w && !w.worker) this.lastSeen.delete(w.pgid);
    if (this.watched.size === 0) this.halt();
    return w?.peak ?? null;
  }

  close(): void {
    this.watched.clear();
    this.halt();
  }

  private halt(): void {
    clearTimeout(this.timer);
    this.timer = undefined;
    this.generation++;
  }

  private schedule(ms: number): void {
    const generation = this.generation;
    this.timer = setTimeout(() => {
      // One reading at a time; the next is scheduled after whichever is in flight, by the timer of
      // the current generation only (a stop and a start while a reading was out made two chains).
      this.reading ??= this.sample().finally(() => {
        this.reading = null;
      });
      const next = () => {
        if (generation !== this.generation) return;
        if (this.watched.size > 0) this.schedule(this.intervalMs);
        else this.timer = undefined;
      };
      void this.reading.then(next, next);
    }, ms);
    // A reading never keeps the run alive.
    this.timer.unref();
  }

  /** One reading: each watched attempt's processes summed per GPU; its fullest GPU's sum is a candidate peak. */
  async sample(fresh = false): Promise<void> {
    const gpus = await (fresh ? this.readFresh() : this.read()).catch(() => null);
    if (!gpus || this.watched.size === 0) return;
    // A worker's group can be watched by two attempts at once: its task that just answered, still
    // waiting for its last reading, and the next task already sent to it. Both are credited.
    const byGroup = new Map<number, Watched[]>();
    for (const w of this.watched.values()) {
      const list = byGroup.get(w.pgid);
      if (list) list.push(w);
      else byGroup.set(w.pgid, [w]);
    }
    const groups = new Map<number, number | null>();
    const seen = new Map<Watched, number>();
    for (const g of gpus) {
      const totals = new Map<Watched, number>();
      for (const p of g.processes ?? []) {
        if (p.usedBytes === null) continue;
        if (!groups.has(p.pid)) groups.set(p.pid, await this.groupOf(p.pid));
        for (const w of byGroup.get(groups.get(p.pid) ?? -1) ?? []) {
          if (w.uuids.has(g.uuid)) totals.set(w, (totals.get(w) ?? 0) + p.usedBytes);
        }
      }
      // A step's `vram` is per GPU: a multi-GPU step's peak is its fullest GPU's.
      for (const [w, bytes] of totals) {
        w.peak = Math.max(w.peak ?? 0, bytes);
        seen.set(w, Math.max(seen.get(w) ?? 0, bytes));
      }
    }
    for (const [w, bytes] of seen) {
      if (!w.worker) continue;
      this.lastSeen.delete(w.pgid);
      this.lastSeen.set(w.pgid, bytes);
      if (this.lastSeen.size > REMEMBERED_GROUPS) this.lastSeen.delete(this.lastSeen.keys().next().value!);
    }
  }
}
