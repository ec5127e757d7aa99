// `gpuplan locks`: the built CLI against a lock directory this test holds slots in, and the
// human table as text at a pinned time.
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { countOtherProcesses, createSlotLock, type GpuState } from "../../../src/run/lock/index.js";
import { formatLocks } from "../../../src/ui/locks-table.js";
import { gpuplan, loadedModules } from "../../helpers/cli.js";
import { built } from "./processes.js";

const UUID = "GPU-abcdef01-2345-6789-abcd-ef0123456789";
const GiB = 1024 ** 3;
let dir: string;
beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-locks-cli-"));
});
afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

describe.skipIf(!built)("gpuplan locks", () => {
  it("--json shows the slots held now with their holders and memory, the mode, and the directory from GPUPLAN_LOCK_DIR", async () => {
    const lock = createSlotLock({ dir });
    const holder = { pid: process.pid, run: "run-7", pipeline: "plate-3", step: "segment", since: "" };
    const memory = { reservationBytes: 4 * GiB, budgetBytes: 60 * GiB };
    const held = await lock.acquire({
      uuid: UUID,
      gpu: "cuda:2",
      maxPipelines: 2,
      holder,
      wait: false,
      ...memory,
    });
    (await lock.acquire({ uuid: UUID, gpu: "cuda:2", maxPipelines: 2, holder, wait: false })).release();
    const r = gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: dir } });
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out).toMatchObject({ schema: "gpuplan/locks@2", dir, mode: "private", workers: [] });
    expect(out.gpus).toEqual([
      {
        uuid: UUID,
        gpu: "cuda:2",
        waiters: 0,
        reservedBytes: 4 * GiB,
        budgetBytes: 60 * GiB,
        freeBytes: 56 * GiB,
        availableBytes: 56 * GiB,
        slots: [
          {
            uuid: UUID,
            gpu: "cuda:2",
            slot: 0,
            held: true,
            exclusive: false,
            reservedBytes: 4 * GiB,
            // The CLI is another process: it sees this one hold the slot in /proc.
            holder: expect.objectContaining({
              pid: process.pid,
              verified: true,
              run: "run-7",
              pipeline: "plate-3",
              step: "segment",
            }),
          },
        ],
      },
    ]);
    const human = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: dir } });
    expect(human.exitCode).toBe(0);
    expect(human.stdout).toContain(`Lock directory ${dir}: private to you;`);
    expect(human.stdout).toMatch(/\nGPU +UUID +SLOT +PID +PIPELINE +STEP +RESERVED +SINCE +HELD FOR\n/);
    expect(human.stdout).toMatch(
      new RegExp(`cuda:2 +GPU-abcdef01 +0 +${process.pid} +plate-3 +segment +4 GiB `),
    );
    expect(human.stdout).toContain("cuda:2: 1 slot held, 4 GiB of 60 GiB reserved, 56 GiB free, 0 waiting\n");
    held.release();
  });

  it("a GPU an exclusive step holds has nothing free for anyone else, whatever its reservation leaves of the budget", async () => {
    // It said "40 GiB free" (budget less the step's own reservation) while no pipeline could get in.
    const lock = createSlotLock({ dir });
    const holder = { pid: process.pid, run: "run-8", pipeline: "train", step: "fit", since: "" };
    const lease = await lock.acquire({
      uuid: UUID,
      gpu: "cuda:2",
      maxPipelines: 2,
      holder,
      wait: false,
      reservationBytes: 20 * GiB,
      budgetBytes: 60 * GiB,
    });
    await lease.upgrade({ wait: false });
    try {
      const r = gpuplan(["locks", "--json"], { env: { GPUPLAN_LOCK_DIR: dir } });
      expect(r.exitCode, r.stderr).toBe(0);
      const out = JSON.parse(r.stdout);
      const { default: validate } = await import("../../../src/generated/locks-validator.js");
      expect(validate(out), JSON.stringify(validate.errors)).toBe(true);
      expect(out.gpus).toEqual([
        expect.objectContaining({ reservedBytes: 20 * GiB, freeBytes: 40 * GiB, availableBytes: 0 }),
      ]);
      expect(out.gpus[0].slots.every((s: { exclusive: boolean }) => s.exclusive)).toBe(true);
      const human = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: dir } });
      expect(human.exitCode).toBe(0);
      expect(human.stdout).toContain(
        "cuda:2: 2 slots held (* exclusive: the whole GPU), 20 GiB of 60 GiB reserved, none free, 0 waiting\n",
      );
    } finally {
      lease.release();
    }
  });

  it("loads koffi but neither ink nor react", () => {
    const { result, modules } = loadedModules(["locks", "--json"], "koffi|ink|react");
    expect(result.exitCode).toBe(0);
    expect(modules.some((m) => m.includes("koffi"))).toBe(true);
    expect(modules.filter((m) => /[\\/](ink|react)[\\/]/.test(m))).toEqual([]);
  });

  it("says so when nothing is held, even when the directory does not exist", () => {
    const r = gpuplan(["locks"], { env: { GPUPLAN_LOCK_DIR: join(dir, "none") } });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain(`Lock directory ${join(dir, "none")}: private to you;`);
    expect(r.stdout).toContain("No GPU slot is held.\n");
  });
});

describe("what other processes hold", () => {
  it("lowers the free budget and what is available, but a GPU an exclusive step has stays at none", () => {
    const gpu = (availableBytes: number | null): GpuState => ({
      uuid: UUID,
      gpu: "cuda:0",
      waiters: 0,
      reservedBytes: 20 * GiB,
      budgetBytes: 60 * GiB,
      freeBytes: 40 * GiB,
      availableBytes,
      slots: [],
    });
    const shared = gpu(40 * GiB);
    countOtherProcesses(shared, 30 * GiB);
    expect(shared).toMatchObject({
      otherProcessesBytes: 30 * GiB,
      freeBytes: 10 * GiB,
      availableBytes: 10 * GiB,
    });
    countOtherProcesses(shared, 50 * GiB);
    expect(shared).toMatchObject({ freeBytes: -10 * GiB, availableBytes: 0 });
    const exclusive = gpu(0);
    countOtherProcesses(exclusive, 5 * GiB);
    expect(exclusive).toMatchObject({ freeBytes: 35 * GiB, availableBytes: 0 });
  });
});

describe("the locks table", () => {
  it("shows holders, a step that outlived its gpuplan, an unverified pid, held slots with no label, memory and waiters", () => {
    const since = "2026-01-02T03:04:05.678Z";
    const holder = (pid: number, step: string | null, extra = {}) => ({
      pid,
      run: "r",
      pipeline: "plate-1",
      step,
      since,
      verified: true,
      ...extra,
    });
    const slot = (n: number, h: ReturnType<typeof holder> | null, reservedBytes = GiB) => ({
      uuid: UUID,
      gpu: h ? "cuda:0" : null,
      slot: n,
      held: true,
      exclusive: false,
      reservedBytes,
      holder: h,
    });
    const gpus: GpuState[] = [
      {
        uuid: UUID,
        gpu: "cuda:0",
        waiters: 2,
        reservedBytes: 4 * GiB,
        budgetBytes: 10 * GiB,
        freeBytes: 6 * GiB,
        availableBytes: 6 * GiB,
        slots: [
          slot(0, holder(100, "segment")),
          slot(1, holder(300, "train", { startedBy: 200 })),
          slot(2, holder(400, null, { verified: false })),
          slot(3, null),
        ],
      },
      {
        uuid: "GPU-short",
        gpu: null,
        waiters: 0,
        reservedBytes: 0,
        budgetBytes: null,
        freeBytes: null,
        availableBytes: null,
        slots: [],
      },
    ];
    const now = Date.parse(since) + 125_000;
    expect(formatLocks("/locks", "shared", gpus, now, (h) => h.pid === 100 || h.pid === 400)).toBe(
      [
        "Lock directory /locks: shared by every user's gpuplan.",
        "GPU     UUID          SLOT  PID                                PIPELINE  STEP     RESERVED  SINCE                 HELD FOR",
        "cuda:0  GPU-abcdef01     0  100                                plate-1   segment     1 GiB  2026-01-02 03:04:05Z     2m05s",
        "cuda:0  GPU-abcdef01     1  300 (step of gpuplan 200, exited)  plate-1   train       1 GiB  2026-01-02 03:04:05Z     2m05s",
        "cuda:0  GPU-abcdef01     2  400 (unverified)                   plate-1               1 GiB  2026-01-02 03:04:05Z     2m05s",
        "?       GPU-abcdef01     3  ?                                                        1 GiB",
        "",
        "cuda:0: 4 slots held, 4 GiB of 10 GiB reserved, 6 GiB free, 2 waiting",
        "",
      ].join("\n"),
    );
  });
});
