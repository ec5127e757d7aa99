// The memory-aware list schedule: never over a GPU's budget, slots or the host's lanes (checked by
// replaying the schedule, for random workloads), close to its lower bound, deterministic; and the
// lower bound's terms.
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import {
  type ListSchedule,
  listSchedule,
  type ScheduleGpu,
  type ScheduleJob,
} from "../../src/compile/list-schedule.js";
import { scheduleLowerBound } from "../../src/compile/lower-bound.js";

/** Replays a schedule: every way it could break a budget, a slot count, the lanes or a job's own needs. */
function violations(
  jobs: readonly ScheduleJob[],
  gpus: readonly ScheduleGpu[],
  lanes: number,
  s: ListSchedule,
) {
  const found: string[] = [];
  const span = (i: number) => [s.startMs[i]!, s.startMs[i]! + jobs[i]!.workMs] as const;
  const runningAt = (t: number) => jobs.map((_, i) => i).filter((i) => span(i)[0] <= t && t < span(i)[1]);
  jobs.forEach((j, i) => {
    const on = s.placedOn[i]!;
    if (j.gpus > 0 && j.eligible.length >= j.gpus) {
      if (on.length !== j.gpus || new Set(on).size !== on.length) found.push(`job ${i} on ${on.length} GPUs`);
      if (on.some((g) => !j.eligible.includes(g))) found.push(`job ${i} on a GPU it may not use`);
      // What it holds fits on every one of its GPUs.
      if (on.some((g) => s.reservedBytes[i]! > j.reservation[j.eligible.indexOf(g)]!))
        found.push(`job ${i} holds more than one of its GPUs gives it`);
    } else if (on.length > 0) found.push(`host job ${i} on a GPU`);
  });
  for (const t of new Set(s.startMs)) {
    const now = runningAt(t);
    if (now.length > lanes) found.push(`${now.length} jobs at ${t} on ${lanes} lanes`);
    gpus.forEach((g, gi) => {
      const here = now.filter((i) => s.placedOn[i]!.includes(gi));
      const bytes = here.reduce((sum, i) => sum + s.reservedBytes[i]!, 0);
      if (bytes > g.capacityBytes) found.push(`GPU ${gi} at ${t}: ${bytes} > ${g.capacityBytes}`);
      if (here.length > g.slots) found.push(`GPU ${gi} at ${t}: ${here.length} > ${g.slots} slots`);
      // Nothing starts on a GPU while another job's exclusive steps own it.
      for (const i of here)
        for (const k of here)
          if (
            k !== i &&
            jobs[k]!.exclusiveMs > 0 &&
            s.startMs[k]! < s.startMs[i]! &&
            s.startMs[i]! < s.startMs[k]! + jobs[k]!.exclusiveMs
          )
            found.push(`job ${i} started on GPU ${gi} during job ${k}'s exclusive time`);
    });
  }
  return found;
}

/**
 * Every time something starts or ends, the waiting jobs (host ones included) that could have
 * started then, on a free lane and GPUs with room: a list schedule leaves none.
 */
function idleWhileWaiting(
  jobs: readonly ScheduleJob[],
  gpus: readonly ScheduleGpu[],
  lanes: number,
  s: ListSchedule,
) {
  const found: string[] = [];
  const times = new Set([...s.startMs, ...jobs.map((j, i) => s.startMs[i]! + j.workMs)]);
  const ran = jobs.map((j) => j.gpus === 0 || j.eligible.length >= j.gpus);
  for (const t of times) {
    const now = jobs
      .map((_, i) => i)
      .filter((i) => s.startMs[i]! <= t && t < s.startMs[i]! + jobs[i]!.workMs);
    if (now.length >= lanes) continue;
    const free = gpus.map((g, gi) => {
      const here = now.filter((i) => s.placedOn[i]!.includes(gi));
      const owned = here.some((i) => t < s.startMs[i]! + Math.min(jobs[i]!.exclusiveMs, jobs[i]!.workMs));
      if (owned || here.length >= g.slots) return -1;
      return (
        g.capacityBytes -
        here.reduce((sum, i) => sum + jobs[i]!.reservation[jobs[i]!.eligible.indexOf(gi)]!, 0)
      );
    });
    jobs.forEach((j, i) => {
      if (!ran[i] || s.startMs[i]! <= t) return;
      const fits = j.eligible.filter((g, k) => free[g]! >= j.reservation[k]!).length;
      if (fits >= j.gpus) found.push(`job ${i} waits at ${t} for ${s.startMs[i]} though it fits`);
    });
  }
  return found;
}

const workload = fc
  .record({
    gpus: fc.array(
      fc.record({ capacityBytes: fc.integer({ min: 8, max: 80 }), slots: fc.integer({ min: 1, max: 4 }) }),
      {
        minLength: 1,
        maxLength: 4,
      },
    ),
    lanes: fc.integer({ min: 1, max: 12 }),
    specs: fc.array(
      fc.record({
        workMs: fc.integer({ min: 1, max: 100 }),
        gpus: fc.integer({ min: 0, max: 2 }),
        share: fc.oneof(fc.constantFrom(0.1, 0.3, 0.5, 0.9, 1), fc.double({ min: 0, max: 1, noNaN: true })),
        exclusive: fc.integer({ min: 0, max: 3 }),
        skip: fc.integer({ min: 0, max: 3 }),
        perGpu: fc.boolean(),
      }),
      { maxLength: 40 },
    ),
  })
  .map(({ gpus, lanes, specs }) => {
    const jobs: ScheduleJob[] = specs.map((x, i) => {
      if (x.gpus === 0) return { workMs: x.workMs, gpus: 0, eligible: [], reservation: [], exclusiveMs: 0 };
      // Some jobs may not use every GPU; each reservation fits the GPU it is for, as compile ensures.
      const eligible = gpus.map((_, g) => g).filter((g) => gpus.length === 1 || (g + i) % 4 !== x.skip);
      return {
        workMs: x.workMs,
        gpus: Math.min(x.gpus, Math.max(1, eligible.length)),
        eligible,
        // The same bytes on each GPU (its peak), at most the smallest budget it may use; or a share of
        // each GPU's budget (a step without `vram`: one slot's share).
        reservation: eligible.map((g) =>
          Math.floor(
            (x.perGpu ? gpus[g]!.capacityBytes : Math.min(...eligible.map((e) => gpus[e]!.capacityBytes))) *
              x.share,
          ),
        ),
        exclusiveMs: x.exclusive === 0 ? Math.ceil(x.workMs / 2) : 0,
      };
    });
    return { jobs, gpus, lanes };
  });

describe("list schedule", () => {
  it("never runs more than a GPU's budget or slots, or more jobs than lanes, and places every job that can run", () => {
    fc.assert(
      fc.property(workload, ({ jobs, gpus, lanes }) => {
        const s = listSchedule(jobs, gpus, lanes);
        expect(violations(jobs, gpus, lanes, s)).toEqual([]);
        expect(idleWhileWaiting(jobs, gpus, lanes, s)).toEqual([]);
        const bound = scheduleLowerBound(jobs, gpus, lanes);
        expect(s.makespanMs).toBeGreaterThanOrEqual(bound.lowerBoundMs);
        expect(s.makespanMs).toBe(Math.max(0, ...jobs.map((j, i) => s.startMs[i]! + j.workMs)));
      }),
      { numRuns: 300, seed: 16 },
    );
  });

  it("a job on GPUs of different sizes holds the least of its reservations there, on each", () => {
    // A job without vram: a slot's share, 30 on the big GPU and 9 on the small one.
    const jobs: ScheduleJob[] = [
      { workMs: 20, gpus: 2, eligible: [0, 1], reservation: [30, 9], exclusiveMs: 0 },
      { workMs: 10, gpus: 1, eligible: [0], reservation: [51], exclusiveMs: 0 },
    ];
    const gpus: ScheduleGpu[] = [
      { capacityBytes: 60, slots: 2 },
      { capacityBytes: 18, slots: 2 },
    ];
    const s = listSchedule(jobs, gpus, 4);
    expect(s.reservedBytes).toEqual([9, 51]);
    // 9 + 51 fit the big GPU's 60: both start at once (holding 30 there, the second waited).
    expect(s.startMs).toEqual([0, 0]);
    expect(violations(jobs, gpus, 4, s)).toEqual([]);
  });

  it("pipelines of two GPUs on many distinct sets of GPUs (past the index's own trees) are scheduled within every bound", () => {
    // Each pipeline may use its own 4 of 16 GPUs (requires over distinctly named cards): more
    // distinct sets than the waiting index gives trees of their own (it shares one looser tree).
    let seed = 9;
    const rnd = () => {
      seed = (seed * 1103515245 + 12345) % 2147483648;
      return seed / 2147483648;
    };
    const gpus: ScheduleGpu[] = Array.from({ length: 16 }, () => ({ capacityBytes: 60, slots: 2 }));
    const jobs: ScheduleJob[] = Array.from({ length: 300 }, () => {
      const set = new Set<number>();
      while (set.size < 4) set.add(Math.floor(rnd() * 16));
      const eligible = [...set].sort((a, b) => a - b);
      return {
        workMs: 1 + Math.floor(rnd() * 50),
        gpus: 2,
        eligible,
        reservation: eligible.map(() => 20),
        exclusiveMs: 0,
      };
    });
    const s = listSchedule(jobs, gpus, 16);
    expect(violations(jobs, gpus, 16, s)).toEqual([]);
    expect(s.placedOn.every((on) => on.length === 2)).toBe(true);
    expect(s.makespanMs).toBeGreaterThanOrEqual(scheduleLowerBound(jobs, gpus, 16).lowerBoundMs);
  });

  it("is deterministic", () => {
    fc.assert(
      fc.property(workload, ({ jobs, gpus, lanes }) => {
        expect(listSchedule(jobs, gpus, lanes)).toEqual(listSchedule(structuredClone(jobs), gpus, lanes));
      }),
      { numRuns: 50, seed: 7 },
    );
  });

  it("runs small pipelines beside a big one instead of one at a time", () => {
    // One 60 GiB GPU with 4 slots: a 40 GiB pipeline and six 4 GiB ones.
    const gpu: ScheduleGpu = { capacityBytes: 60, slots: 4 };
    const job = (reservation: number, workMs = 10): ScheduleJob => ({
      workMs,
      gpus: 1,
      eligible: [0],
      reservation: [reservation],
      exclusiveMs: 0,
    });
    const jobs = [job(40, 20), ...Array.from({ length: 6 }, () => job(4))];
    const s = listSchedule(jobs, [gpu], 16);
    // The big one first (longest), three small ones beside it, the other three when they end.
    expect(s.startMs).toEqual([0, 0, 0, 0, 10, 10, 10]);
    expect(s.makespanMs).toBe(20);
  });

  it("gives GPUs the host lanes leave idle their share of the work", () => {
    // Four 1-slot GPUs, two lanes: the third and fourth pipelines start when the first two end, on the
    // GPUs that had none (a Slurm export runs each pipeline as its own task, on its plan GPU).
    const job: ScheduleJob = {
      workMs: 60,
      gpus: 1,
      eligible: [0, 1, 2, 3],
      reservation: [1, 1, 1, 1],
      exclusiveMs: 0,
    };
    const s = listSchedule([job, job, job, job], Array(4).fill({ capacityBytes: 10, slots: 1 }), 2);
    expect(s.placedOn).toEqual([[0], [1], [2], [3]]);
    expect(s.startMs).toEqual([0, 0, 60, 60]);
  });

  it("starts a pipeline on its idle GPU however many wait for another GPU", () => {
    // An A100 and an L4, one slot each: 1,100 pipelines may use only the A100, five only the L4. The
    // L4's start at 0, one after the other (a round once passed over 1,024 waiting pipelines, then
    // stopped, so they waited for the A100's queue).
    const job = (gpu: number, workMs: number): ScheduleJob => ({
      workMs,
      gpus: 1,
      eligible: [gpu],
      reservation: [1],
      exclusiveMs: 0,
    });
    const jobs = [
      ...Array.from({ length: 1100 }, () => job(0, 600)),
      ...Array.from({ length: 5 }, () => job(1, 300)),
    ];
    const gpus = [
      { capacityBytes: 80, slots: 1 },
      { capacityBytes: 24, slots: 1 },
    ];
    const s = listSchedule(jobs, gpus, 64);
    expect(s.startMs.slice(1100)).toEqual([0, 300, 600, 900, 1200]);
    expect(s.placedOn.slice(1100)).toEqual(Array(5).fill([1]));
    expect(idleWhileWaiting(jobs, gpus, 64, s)).toEqual([]);
  });

  it("starts a pipeline of two GPUs on two idle ones however many wait for a busy one", () => {
    // Three 1-slot GPUs: a long pipeline holds GPU 0; 1,100 two-GPU pipelines need GPUs 0 and 1; one
    // needs GPUs 1 and 2, both idle, and starts at 0.
    const two = (eligible: number[], workMs: number): ScheduleJob => ({
      workMs,
      gpus: 2,
      eligible,
      reservation: eligible.map(() => 1),
      exclusiveMs: 0,
    });
    const jobs: ScheduleJob[] = [
      { workMs: 10_000, gpus: 1, eligible: [0], reservation: [1], exclusiveMs: 0 },
      ...Array.from({ length: 1100 }, () => two([0, 1], 100)),
      two([1, 2], 50),
    ];
    const gpus = Array(3).fill({ capacityBytes: 10, slots: 1 });
    const s = listSchedule(jobs, gpus, 64);
    expect(s.startMs.at(-1)).toBe(0);
    expect(s.placedOn.at(-1)).toEqual([1, 2]);
    expect(idleWhileWaiting(jobs, gpus, 64, s)).toEqual([]);
  });

  it("host jobs take lanes: CPU pipelines have real starts and bound the makespan", () => {
    const host = (workMs: number): ScheduleJob => ({
      workMs,
      gpus: 0,
      eligible: [],
      reservation: [],
      exclusiveMs: 0,
    });
    const jobs = [host(8000), host(8000), host(8000), host(8000), host(1000)];
    const s = listSchedule(jobs, [], 2);
    expect(s.startMs).toEqual([0, 0, 8000, 8000, 16000]);
    expect(s.makespanMs).toBe(17000);
    expect(scheduleLowerBound(jobs, [], 2)).toMatchObject({
      lowerBoundMs: 16500,
      lowerBoundBy: "host-lanes",
    });
  });
});

describe("lower bound", () => {
  const gpus: ScheduleGpu[] = [
    { capacityBytes: 100, slots: 4 },
    { capacityBytes: 100, slots: 4 },
  ];
  const job = (workMs: number, reservation: number, n = 1): ScheduleJob => ({
    workMs,
    gpus: n,
    eligible: [0, 1],
    reservation: [reservation, reservation],
    exclusiveMs: 0,
  });

  it("is the largest of its terms, and names it", () => {
    // Eight 10-minute pipelines of 10 bytes on 8 slots: one round; the longest pipeline binds.
    expect(scheduleLowerBound(Array(8).fill(job(600, 10)), gpus, 64)).toEqual({
      lowerBoundMs: 600,
      lowerBoundBy: "longest-pipeline",
      terms: { longestPipelineMs: 600, gpuSlotsMs: 600, gpuMemoryMs: 240, hostLanesMs: 75 },
    });
    // Sixteen: two rounds of slots.
    expect(scheduleLowerBound(Array(16).fill(job(600, 10)), gpus, 64)).toMatchObject({
      lowerBoundMs: 1200,
      lowerBoundBy: "gpu-slots",
    });
    // Eight of 80 bytes: only one fits a GPU at a time, memory binds (8 × 600 × 80 / 200).
    expect(scheduleLowerBound(Array(8).fill(job(600, 80)), gpus, 64)).toMatchObject({
      lowerBoundMs: 1920,
      lowerBoundBy: "gpu-memory",
    });
    // A gpus: 2 job counts on both GPUs.
    expect(scheduleLowerBound([job(600, 80, 2)], gpus, 64).terms.gpuMemoryMs).toBe(480);
    // Two lanes for eight pipelines.
    expect(scheduleLowerBound(Array(8).fill(job(600, 10)), gpus, 2)).toMatchObject({
      lowerBoundMs: 2400,
      lowerBoundBy: "host-lanes",
    });
  });
});
