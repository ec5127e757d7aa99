// Admission by memory as well as by count (#16 item 3), arrival order across lock instances
// (each one stands in for a gpuplan process: OFD locks of two open file descriptions conflict
// as two processes' would), and a lock directory full of junk or a GPU with a huge slot count.
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import {
  createSlotLock,
  GpuBusyError,
  type SlotLease,
  type SlotRequest,
} from "../../../src/run/lock/index.js";

const UUID = "GPU-aaaaaaaa-2222-3333-4444-555555555555";
const GiB = 1024 ** 3;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-admission-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

function request(pipeline: string, reservationBytes: number, extra: Partial<SlotRequest> = {}): SlotRequest {
  return {
    uuid: UUID,
    gpu: "cuda:0",
    maxPipelines: 4,
    reservationBytes,
    budgetBytes: 60 * GiB,
    holder: { pid: process.pid, run: "r", pipeline, step: null, since: "" },
    wait: true,
    ...extra,
  };
}

describe("admission by memory", () => {
  it("admits while the reservations fit the budget, then not even with a free slot; a release makes room", async () => {
    const big = await createSlotLock({ dir }).acquire(request("big", 40 * GiB));
    const small = [
      await createSlotLock({ dir }).acquire(request("s1", 8 * GiB)),
      await createSlotLock({ dir }).acquire(request("s2", 8 * GiB)),
    ];
    // 56 GiB reserved, a slot free, 8 GiB more does not fit a 60 GiB budget.
    await expect(createSlotLock({ dir }).acquire(request("s3", 8 * GiB, { wait: false }))).rejects.toThrow(
      GpuBusyError,
    );
    const gpus = await createSlotLock({ dir }).inspectGpus();
    expect(gpus[0]).toMatchObject({ reservedBytes: 56 * GiB, budgetBytes: 60 * GiB, freeBytes: 4 * GiB });
    const waiting = createSlotLock({ dir }).acquire(request("s3", 8 * GiB));
    await sleep(30);
    big.release();
    const s3 = await waiting;
    expect(s3.slots).toEqual([0]);
    for (const l of [...small, s3]) l.release();
  });

  it("a pipeline alone on the GPU is admitted whatever it reserves; an exclusive step still takes every slot", async () => {
    const huge = await createSlotLock({ dir }).acquire(request("huge", 100 * GiB, { wait: false }));
    await expect(createSlotLock({ dir }).acquire(request("tiny", 0, { wait: false }))).rejects.toThrow(
      GpuBusyError,
    );
    huge.release();
    const a = await createSlotLock({ dir }).acquire(request("a", GiB));
    await a.upgrade({ wait: false });
    expect(a.slots).toEqual([0, 1, 2, 3]);
    await expect(createSlotLock({ dir }).acquire(request("tiny", 0, { wait: false }))).rejects.toThrow(
      GpuBusyError,
    );
    a.downgrade();
    const tiny = await createSlotLock({ dir }).acquire(request("tiny", 0, { wait: false }));
    tiny.release();
    a.release();
  });

  it("a big pipeline in line is not starved by a stream of small ones: later arrivals wait behind it", async () => {
    const holders: SlotLease[] = [];
    for (let i = 0; i < 3; i++)
      holders.push(await createSlotLock({ dir }).acquire(request(`s${i}`, 8 * GiB)));
    // 24 GiB reserved: the 40 GiB pipeline must wait for two of them to go.
    let bigGot = 0;
    const big = createSlotLock({ dir })
      .acquire(request("big", 40 * GiB))
      .then((l) => {
        bigGot = performance.now();
        return l;
      });
    await sleep(20);
    // A small one arriving now fits (32 GiB, a slot free) but is behind the big one in line.
    let smallGot = 0;
    const late = createSlotLock({ dir })
      .acquire(request("late", 8 * GiB))
      .then((l) => {
        smallGot = performance.now();
        return l;
      });
    await sleep(50);
    expect(bigGot).toBe(0);
    expect(smallGot).toBe(0);
    holders.shift()!.release();
    holders.shift()!.release();
    const bigLease = await big;
    const lateLease = await late;
    expect(bigGot).toBeLessThanOrEqual(smallGot);
    const waiters = await createSlotLock({ dir }).inspectGpus();
    expect(waiters[0]!.reservedBytes).toBe(56 * GiB);
    for (const l of [...holders, bigLease, lateLease]) l.release();
  });

  it("across lock instances, waiters are served in arrival order", async () => {
    const held = await createSlotLock({ dir }).acquire(request("p0", 0, { maxPipelines: 1 }));
    const order: string[] = [];
    const waiters: Promise<void>[] = [];
    for (const name of ["p1", "p2", "p3", "p4"]) {
      waiters.push(
        createSlotLock({ dir })
          .acquire(request(name, 0, { maxPipelines: 1 }))
          .then((lease) => {
            order.push(name);
            setTimeout(() => lease.release(), 5);
          }),
      );
      await sleep(5);
    }
    expect((await createSlotLock({ dir }).inspectGpus())[0]!.waiters).toBe(4);
    held.release();
    await Promise.all(waiters);
    expect(order).toEqual(["p1", "p2", "p3", "p4"]);
  });
});

describe("a directory full of junk, a GPU with many slots", () => {
  const openFds = () => readdirSync("/proc/self/fd").length;

  it("3,000 junk files change nothing: an exclusive holder holds one descriptor", async () => {
    for (let i = 0; i < 3000; i++) writeFileSync(join(dir, `${UUID}.slot${i}.lock`), "");
    writeFileSync(join(dir, `${UUID}.gpu.lock.tmp`), "junk");
    const before = openFds();
    const lease = await createSlotLock({ dir }).acquire(request("x", 0));
    await lease.upgrade({ wait: false });
    expect(lease.fds).toHaveLength(1);
    expect(openFds() - before).toBeLessThanOrEqual(2);
    lease.release();
  });

  it("max_pipelines 100,000: no per-slot files; an exclusive step after it still works", async () => {
    const many = { maxPipelines: 100_000 };
    const leases = await Promise.all(
      Array.from({ length: 50 }, (_, i) => createSlotLock({ dir }).acquire(request(`p${i}`, 0, many))),
    );
    expect(new Set(leases.map((l) => l.slots[0])).size).toBe(50);
    for (const l of leases) l.release();
    expect(readdirSync(dir)).toEqual([`${UUID}.gpu.lock`]);
    const ex = await createSlotLock({ dir }).acquire(request("ex", 0, { maxPipelines: 2 }));
    await ex.upgrade({ wait: false });
    expect(ex.fds).toHaveLength(1);
    ex.release();
  });
});
