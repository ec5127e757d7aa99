// The GPU slot lock in one process. Separate createSlotLock() instances stand in for separate
// gpuplan processes: OFD locks belong to open file descriptions, so they exclude each other
// exactly as two processes would (multi-process tests: contention.test.ts, kill.test.ts).
import {
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  readSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { privateLockDir } from "../../../src/run/lock/default-lock-dir.js";
import { RECORD_SIZE, recordOffset } from "../../../src/run/lock/gpu-file-layout.js";
import {
  createSlotLock,
  GpuBusyError,
  LockTimeoutError,
  type SlotRequest,
} from "../../../src/run/lock/index.js";

const UUID = "GPU-11111111-2222-3333-4444-555555555555";

let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-lock-test-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

function request(pipeline: string, extra: Partial<SlotRequest> = {}): SlotRequest {
  return {
    uuid: UUID,
    gpu: "cuda:0",
    maxPipelines: 2,
    holder: { pid: process.pid, run: "run-1", pipeline, step: "load", since: "2000-01-01T00:00:00.000Z" },
    wait: true,
    ...extra,
  };
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe("createSlotLock", () => {
  it("uses the directory it is given, else this user's private one, without touching the disk; never GPUPLAN_LOCK_DIR (the CLI resolves it)", () => {
    const saved = process.env.GPUPLAN_LOCK_DIR;
    try {
      delete process.env.GPUPLAN_LOCK_DIR;
      // No shared directory is set up on a test machine (gpuplan locks init).
      expect(createSlotLock().dir).toBe(privateLockDir());
      expect(privateLockDir()).toBe(`/tmp/gpuplan-locks-${process.geteuid!()}`);
      process.env.GPUPLAN_LOCK_DIR = join(dir, "from-env");
      expect(createSlotLock().dir).toBe(privateLockDir());
      expect(createSlotLock({ dir: join(dir, "explicit") }).dir).toBe(join(dir, "explicit"));
    } finally {
      if (saved === undefined) delete process.env.GPUPLAN_LOCK_DIR;
      else process.env.GPUPLAN_LOCK_DIR = saved;
    }
  });

  it("creates a missing directory private (0700) and one lock file per GPU, whatever the slots", async () => {
    const old = process.umask(0);
    try {
      const lockDir = join(dir, "locks");
      const lock = createSlotLock({ dir: lockDir });
      const leases = [await lock.acquire(request("a")), await lock.acquire(request("b"))];
      expect(statSync(lockDir).mode & 0o7777).toBe(0o700);
      expect(readdirSync(lockDir)).toEqual([`${UUID}.gpu.lock`]);
      // Root's lock files are the shared ones (gpuplan locks init); a user's are its own.
      expect(statSync(join(lockDir, `${UUID}.gpu.lock`)).mode & 0o777).toBe(
        process.geteuid!() === 0 ? 0o666 : 0o600,
      );
      for (const l of leases) l.release();
    } finally {
      process.umask(old);
    }
  });
});

describe("acquire and release", () => {
  it("hands out each slot once, reuses a released one, and release is idempotent", async () => {
    const a = createSlotLock({ dir });
    const b = createSlotLock({ dir });
    const first = await a.acquire(request("p1"));
    const second = await b.acquire(request("p2"));
    expect([first.slots, second.slots]).toEqual([[0], [1]]);
    expect(first.fds).toHaveLength(1);
    expect(first.fds[0]).toBeGreaterThan(2);
    await expect(createSlotLock({ dir }).acquire(request("p3", { wait: false }))).rejects.toThrow(
      GpuBusyError,
    );
    first.release();
    first.release();
    expect(first.slots).toEqual([]);
    const third = await b.acquire(request("p3", { wait: false }));
    expect(third.slots).toEqual([0]);
    second.release();
    third.release();
  });

  it("one process's leases exclude each other too (one slot each); without wait, a request only they keep out queues behind them", async () => {
    const lock = createSlotLock({ dir });
    const leases = [await lock.acquire(request("p1")), await lock.acquire(request("p2"))];
    let third: Awaited<ReturnType<typeof lock.acquire>> | undefined;
    const waiting = lock.acquire(request("p3", { wait: false })).then((l) => (third = l));
    await sleep(30);
    expect(third).toBeUndefined();
    leases[0]!.release();
    await waiting;
    expect(third!.slots).toEqual([0]);
    third!.release();
    leases[1]!.release();
  });

  it("without wait, a queued request fails once another process's slot is in its way, naming only that holder", async () => {
    const lock = createSlotLock({ dir });
    const one = { maxPipelines: 1 };
    const p1 = await lock.acquire(request("p1", one));
    const p2 = lock.acquire(request("p2", { ...one, wait: false }));
    await sleep(10);
    const p3 = lock.acquire(request("p3", { ...one, wait: false }));
    p3.catch(() => {});
    await sleep(20);
    // Another process joins the line behind p2 (the head of this process's waiters) and ahead of p3.
    const theirs = createSlotLock({ dir }).acquire(request("theirs", one));
    await sleep(20);
    p1.release();
    const second = await p2;
    await sleep(20);
    second.release();
    const error = await p3.then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(GpuBusyError);
    expect((error as GpuBusyError).holders.map((x) => x.pipeline)).toEqual(["theirs"]);
    (await theirs).release();
  });

  it("slots of different GPUs are independent", async () => {
    const lock = createSlotLock({ dir });
    const one = await lock.acquire(request("p1", { maxPipelines: 1 }));
    const other = await lock.acquire(request("p2", { maxPipelines: 1, uuid: "GPU-other", gpu: "cuda:1" }));
    expect(other.slots).toEqual([0]);
    one.release();
    other.release();
  });

  it("a lock file a cleaner removed while free is made again and still excludes", async () => {
    const lock = createSlotLock({ dir });
    (await lock.acquire(request("p1"))).release();
    rmSync(join(dir, `${UUID}.gpu.lock`));
    const a = await lock.acquire(request("p1"));
    const b = await createSlotLock({ dir }).acquire(request("p2"));
    expect([a.slots, b.slots]).toEqual([[0], [1]]);
    await expect(createSlotLock({ dir }).acquire(request("p3", { wait: false }))).rejects.toThrow(
      GpuBusyError,
    );
    a.release();
    b.release();
  });
});

describe("holder info", () => {
  it("records the holder beside its slot in the GPU's file and setHolder updates it; since is when the slot was taken", async () => {
    const before = Date.now();
    const lease = await createSlotLock({ dir }).acquire(request("plate-1"));
    const info = () =>
      JSON.parse(
        readFileSync(join(dir, `${UUID}.gpu.lock`))
          .subarray(recordOffset(0), recordOffset(0) + RECORD_SIZE)
          .toString(),
      );
    expect(info()).toMatchObject({
      uuid: UUID,
      gpu: "cuda:0",
      slot: 0,
      pid: process.pid,
      pipeline: "plate-1",
    });
    expect(Date.parse(info().since)).toBeGreaterThanOrEqual(before - 1);
    lease.setHolder({
      ...request("plate-1").holder,
      step: "segment-with-a-much-longer-step-name".repeat(4),
    });
    expect(info().step).toBe("segment-with-a-much-longer-step-name".repeat(4));
    // A label too long for the record is cut, never written past it.
    lease.setHolder({ ...request("plate-1").holder, step: "x".repeat(5000) });
    expect(info().step.length).toBeLessThan(RECORD_SIZE);
    lease.setHolder({ ...request("plate-1").holder, step: "short" });
    expect(info().step).toBe("short");
    lease.release();
  });

  it("setHolder with the holder it has already writes nothing (a step started on the slot taken for it); another holder is written", async () => {
    const lease = await createSlotLock({ dir }).acquire(request("plate-1"));
    const file = join(dir, `${UUID}.gpu.lock`);
    // The record's bytes are rewritten in place, so the file's change time tells whether it was written.
    const changed = () => statSync(file, { bigint: true }).ctimeNs;
    const before = changed();
    await sleep(20);
    lease.setHolder({ ...request("plate-1").holder, since: "2001-01-01T00:00:00.000Z" });
    expect(changed()).toBe(before);
    lease.setHolder({ ...request("plate-1").holder, step: "segment" });
    expect(changed()).toBeGreaterThan(before);
    lease.release();
  });

  it("a busy error names the holders: pid, pipeline, step, since", async () => {
    const lock = createSlotLock({ dir });
    const held = [await lock.acquire(request("p1")), await lock.acquire(request("p2"))];
    const error = await createSlotLock({ dir })
      .acquire(request("p3", { wait: false }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GpuBusyError);
    const busy = error as GpuBusyError;
    expect(busy.gpu).toBe("cuda:0");
    expect(busy.holders.map((h) => h.pipeline)).toEqual(["p1", "p2"]);
    expect(busy.holders[0]).toMatchObject({ pid: process.pid, run: "run-1", step: "load" });
    expect(busy.holders[0]!.since).toMatch(/^\d{4}-\d\d-\d\dT/);
    for (const l of held) l.release();
  });
});

describe("inspect", () => {
  it("a recorded pid that is one of the holder's threads is not taken for the holder (/proc/TID shows its descriptors)", async () => {
    // CI flake, 2026-11-27: a test's made-up holder pid 4242 was a thread of the test's own
    // process (pids are small on a fresh runner) and was named, verified, as the holder.
    const thread = readdirSync("/proc/self/task")
      .map(Number)
      .find((tid) => tid !== process.pid);
    expect(thread, "this process has a thread besides its main one").toBeDefined();
    const lock = createSlotLock({ dir });
    const held = await lock.acquire(
      request("theirs", { holder: { pid: thread!, run: "r", pipeline: "theirs", step: "fit", since: "" } }),
    );
    const [state] = await createSlotLock({ dir }).inspect();
    expect(state!.holder).toMatchObject({ pid: process.pid, startedBy: thread, verified: true });
    held.release();
  });

  it("reports the slots held now, with the kernel-confirmed pid; a released slot's record is ignored", async () => {
    const lock = createSlotLock({ dir });
    const a = await lock.acquire(request("p1", { reservationBytes: 5, budgetBytes: 100 }));
    const b = await lock.acquire(request("p2"));
    b.release();
    const states = await createSlotLock({ dir }).inspect();
    expect(states).toEqual([
      {
        uuid: UUID,
        gpu: "cuda:0",
        slot: 0,
        held: true,
        exclusive: false,
        reservedBytes: 5,
        holder: expect.objectContaining({ pipeline: "p1", pid: process.pid, verified: true }),
      },
    ]);
    // The same process's own locks show as held (the probe uses a fresh open file description).
    expect(await lock.inspect()).toHaveLength(1);
    a.release();
    expect(await lock.inspect()).toEqual([]);
  });

  it("tolerates a damaged record and ignores other files in the directory", async () => {
    const lock = createSlotLock({ dir });
    const a = await lock.acquire(request("p1"));
    const b = await lock.acquire(request("p2"));
    const fd = openSync(join(dir, `${UUID}.gpu.lock`), "r+");
    writeSync(fd, Buffer.from('{"uuid":"GPU-9999'), 0, 17, recordOffset(0) + 5);
    writeSync(fd, Buffer.alloc(RECORD_SIZE), 0, RECORD_SIZE, recordOffset(1));
    writeFileSync(join(dir, "unrelated.txt"), "x");
    writeFileSync(join(dir, "GPU-junk.gpu.lock.bak"), "x");
    const states = await lock.inspect();
    expect(states.map((s) => [s.slot, s.held, s.holder])).toEqual([
      [0, true, null],
      [1, true, null],
    ]);
    a.release();
    b.release();
  });

  it("an empty or missing directory has no slots", async () => {
    expect(await createSlotLock({ dir: join(dir, "missing") }).inspect()).toEqual([]);
  });
});

describe("waiting", () => {
  it("a waiter gets the slot soon after the holder releases it", async () => {
    const lock = createSlotLock({ dir });
    const held = await lock.acquire(request("p1", { maxPipelines: 1 }));
    const waiting = createSlotLock({ dir }).acquire(request("p2", { maxPipelines: 1 }));
    await sleep(30);
    const released = performance.now();
    held.release();
    const lease = await waiting;
    expect(performance.now() - released).toBeLessThan(200);
    expect(lease.slots).toEqual([0]);
    lease.release();
  });

  it("waits without blocking the event loop", async () => {
    const held = await createSlotLock({ dir }).acquire(request("p1", { maxPipelines: 1 }));
    const waiting = createSlotLock({ dir }).acquire(request("p2", { maxPipelines: 1, timeoutMs: 300 }));
    let ticks = 0;
    const timer = setInterval(() => ticks++, 10);
    await expect(waiting).rejects.toThrow(LockTimeoutError);
    clearInterval(timer);
    expect(ticks).toBeGreaterThan(10);
    held.release();
  });

  it("times out with LockTimeoutError naming the holders", async () => {
    const held = await createSlotLock({ dir }).acquire(request("p1", { maxPipelines: 1 }));
    const started = performance.now();
    const error = await createSlotLock({ dir })
      .acquire(request("p2", { maxPipelines: 1, timeoutMs: 100 }))
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(LockTimeoutError);
    const timeout = error as LockTimeoutError;
    expect(timeout.waitedMs).toBeGreaterThanOrEqual(100);
    expect(performance.now() - started).toBeLessThan(1000);
    expect(timeout.holders.map((h) => h.pipeline)).toEqual(["p1"]);
    held.release();
  });

  it("an abort signal ends the wait, and the aborted waiter never takes the slot later", async () => {
    const lock = createSlotLock({ dir });
    const held = await lock.acquire(request("p1", { maxPipelines: 1 }));
    const controller = new AbortController();
    const waiting = lock.acquire(request("p2", { maxPipelines: 1, signal: controller.signal }));
    await sleep(20);
    controller.abort();
    await expect(waiting).rejects.toMatchObject({ name: "AbortError" });
    held.release();
    await sleep(40);
    expect(await lock.inspect()).toEqual([]);
    const pre = new AbortController();
    pre.abort();
    await expect(lock.acquire(request("p3", { signal: pre.signal }))).rejects.toMatchObject({
      name: "AbortError",
    });
  });

  it("an uncontended take stands in no line; a newcomer with room still stays behind another process's waiter", async () => {
    // The line's ticket counter (bytes 8..15 of the GPU's file): an uncontended take leaves it
    // alone (no ticket taken and given back: four lock-file calls fewer, issue #17); a waiter
    // takes one; a newcomer that sees someone in line takes one too and does not pass.
    const path = join(dir, `${UUID}.gpu.lock`);
    const counter = () => {
      const fd = openSync(path, "r");
      const b = Buffer.alloc(8);
      const n = readSync(fd, b, 0, 8, 8);
      closeSync(fd);
      return n === 8 ? Number(b.readBigUInt64LE(0)) : 0;
    };
    const memory = (pipeline: string, reservationBytes: number, wait = true) =>
      request(pipeline, { maxPipelines: 3, reservationBytes, budgetBytes: 100, wait });
    const big = await createSlotLock({ dir }).acquire(memory("big", 60));
    const other = await createSlotLock({ dir }).acquire(memory("other", 0));
    other.release();
    expect(counter()).toBe(0);
    const waiting = createSlotLock({ dir }).acquire(memory("also-big", 60));
    await sleep(20);
    expect(counter()).toBe(1);
    // 10 bytes fit beside "big", but "also-big" is first in line.
    await expect(createSlotLock({ dir }).acquire(memory("small", 10, false))).rejects.toThrow(GpuBusyError);
    expect(counter()).toBe(2);
    big.release();
    const second = await waiting;
    expect(second.slots).toEqual([0]);
    // The line is empty again: the small one goes at once, without a ticket.
    const small = await createSlotLock({ dir }).acquire(memory("small", 10, false));
    expect(small.slots).toEqual([1]);
    expect(counter()).toBe(2);
    small.release();
    second.release();
  });

  it("serves one process's waiters for a GPU first come, first served", async () => {
    const lock = createSlotLock({ dir });
    const held = await lock.acquire(request("p0", { maxPipelines: 1 }));
    const order: string[] = [];
    const waiters = ["p1", "p2", "p3"].map((name) =>
      lock.acquire(request(name, { maxPipelines: 1 })).then((lease) => {
        order.push(name);
        setTimeout(() => lease.release(), 5);
      }),
    );
    await sleep(10);
    held.release();
    await Promise.all(waiters);
    expect(order).toEqual(["p1", "p2", "p3"]);
  });
});

describe("exclusive upgrade", () => {
  it("takes every slot once the others let go; newcomers wait behind it (arrival order)", async () => {
    const a = await createSlotLock({ dir }).acquire(request("exclusive", { maxPipelines: 3 }));
    const b = await createSlotLock({ dir }).acquire(request("shared", { maxPipelines: 3 }));
    const upgrading = a.upgrade({ wait: true });
    await sleep(30);
    // Slot 2 is free, but the upgrader is first in line: a newcomer must not get in.
    await expect(
      createSlotLock({ dir }).acquire(request("late", { maxPipelines: 3, wait: false })),
    ).rejects.toThrow(GpuBusyError);
    b.release();
    await upgrading;
    expect([...a.slots].sort()).toEqual([0, 1, 2]);
    // One descriptor however many slots (one byte range in one lock file).
    expect(a.fds).toHaveLength(1);
    const states = await createSlotLock({ dir }).inspect();
    expect(states.map((s) => s.holder?.pipeline)).toEqual(["exclusive", "exclusive", "exclusive"]);
    a.downgrade();
    expect(a.slots).toEqual([0]);
    const late = await createSlotLock({ dir }).acquire(request("late", { maxPipelines: 3, wait: false }));
    expect(late.slots).toEqual([1]);
    late.release();
    a.release();
  });

  it("two holders upgrading at once do not deadlock: one goes, then the other", async () => {
    const a = await createSlotLock({ dir }).acquire(request("a"));
    const b = await createSlotLock({ dir }).acquire(request("b"));
    const done: string[] = [];
    const run = async (name: string, lease: typeof a) => {
      await lease.upgrade({ wait: true, timeoutMs: 5000 });
      done.push(name);
      expect(lease.slots).toHaveLength(2);
      await sleep(20);
      lease.release();
    };
    await Promise.all([run("a", a), run("b", b)]);
    expect(done.sort()).toEqual(["a", "b"]);
  });

  it("a timed-out upgrade opens the gate again and keeps one slot", async () => {
    const a = await createSlotLock({ dir }).acquire(request("a"));
    const b = await createSlotLock({ dir }).acquire(request("b"));
    await expect(a.upgrade({ wait: true, timeoutMs: 80 })).rejects.toThrow(LockTimeoutError);
    expect(a.slots).toHaveLength(1);
    b.release();
    const c = await createSlotLock({ dir }).acquire(request("c", { wait: false }));
    c.release();
    a.release();
  });

  it("--no-wait upgrade fails at once with the other holders; release cancels a waiting upgrade", async () => {
    const a = await createSlotLock({ dir }).acquire(request("a"));
    const b = await createSlotLock({ dir }).acquire(request("b"));
    const error = await a.upgrade({ wait: false }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(GpuBusyError);
    expect((error as GpuBusyError).holders.map((h) => h.pipeline)).toEqual(["b"]);
    const waiting = a.upgrade({ wait: true });
    await sleep(10);
    a.release();
    await expect(waiting).rejects.toThrow(/released/);
    b.release();
    expect(await createSlotLock({ dir }).inspect()).toEqual([]);
  });
});
