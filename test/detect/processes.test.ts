// Who the processes on a GPU are (src/detect/processes.ts): owner and command line from /proc,
// and the "started by gpuplan" mark, which only a held GPU slot lock up the process's ancestry
// can give — never a stale record, a recycled pid, or anything the process itself controls.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { describeProcesses, MAX_COMMAND_LENGTH } from "../../src/detect/processes.js";
import { rootsFrom } from "../../src/detect/roots.js";
import { slotHoldersReader } from "../../src/detect/slot-holders.js";
import type { GpuInfo, GpuProcess } from "../../src/inventory/types.js";
import { createSlotLock, type SlotLease } from "../../src/run/lock/index.js";
import { gpuplan } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt, scenarioWith } from "./fake-libs.js";

const lockDir = mkdtempSync(join(tmpdir(), "gpuplan-detect-locks-"));
const realProc = rootsFrom({});
const children: ChildProcess[] = [];
const leases: SlotLease[] = [];

afterEach(() => {
  for (const l of leases.splice(0)) l.release();
});
afterAll(() => {
  for (const c of children) c.kill("SIGKILL");
  rmSync(lockDir, { recursive: true, force: true });
});

function sleeper(extraEnv: NodeJS.ProcessEnv = {}): number {
  const child = spawn("sleep", ["60"], { stdio: "ignore", env: { ...process.env, ...extraEnv } });
  children.push(child);
  return child.pid!;
}

/** A GPU with the given pids as the library reported them (nothing known about them yet). */
function gpuWith(pids: number[]): GpuInfo {
  return {
    id: "cuda:0",
    backend: "cuda",
    name: "NVIDIA Fake GPU",
    uuid: "GPU-11111111-2222-4333-8444-555555555555",
    pciBusId: null,
    memoryBytes: 1,
    computeCapability: null,
    mig: null,
    processes: pids.map((pid) => ({ pid, usedMemoryBytes: 1, user: null, command: null, gpuplan: null })),
  };
}

async function hold(uuid: string, pipeline: string, step: string | null): Promise<void> {
  const lock = createSlotLock({ dir: lockDir });
  leases.push(
    await lock.acquire({
      uuid,
      gpu: "cuda:0",
      maxPipelines: 4,
      holder: { pid: process.pid, run: "run-42", pipeline, step, since: new Date().toISOString() },
      wait: false,
    }),
  );
}

const described = async (pids: number[]): Promise<GpuProcess[]> => {
  const gpu = gpuWith(pids);
  await describeProcesses([gpu], realProc, slotHoldersReader(lockDir));
  return gpu.processes!;
};

describe("GPU processes: who they are", () => {
  it("owner and command line from /proc; a pid /proc does not show keeps nulls", async () => {
    const pid = sleeper();
    expect(await described([pid, 4194310])).toEqual([
      { pid, usedMemoryBytes: 1, user: userInfo().username, command: "sleep 60", gpuplan: null },
      { pid: 4194310, usedMemoryBytes: 1, user: null, command: null, gpuplan: null },
    ]);
  });

  it("a step of a gpuplan run holding a slot is marked with the run, pipeline and step", async () => {
    await hold("GPU-aaaaaaaa-0000-4000-8000-000000000001", "train", "fit");
    const pid = sleeper();
    expect((await described([pid]))[0]!.gpuplan).toEqual({ run: "run-42", pipeline: "train", step: "fit" });
  });

  it("nothing marks a process that does not descend from the holder (an orphan reparented to init)", async () => {
    await hold("GPU-aaaaaaaa-0000-4000-8000-000000000002", "train", "fit");
    const orphan = Number(
      execFileSync("sh", ["-c", "sleep 60 >/dev/null 2>&1 & echo $!"], { encoding: "utf8" }),
    );
    try {
      expect((await described([orphan]))[0]!.gpuplan).toBeNull();
    } finally {
      process.kill(orphan, "SIGKILL");
    }
  });

  it("a released slot's leftover record is stale: no mark", async () => {
    await hold("GPU-aaaaaaaa-0000-4000-8000-000000000003", "train", "fit");
    for (const l of leases.splice(0)) l.release();
    const pid = sleeper();
    expect((await described([pid]))[0]!.gpuplan).toBeNull();
  });

  it("one run holding slots for two pipelines: the step's own GPUPLAN_PIPELINE/STEP pick the record, else only the run", async () => {
    await hold("GPU-aaaaaaaa-0000-4000-8000-000000000005", "train", "fit");
    await hold("GPU-aaaaaaaa-0000-4000-8000-000000000006", "eval", "score");
    const picked = sleeper({ GPUPLAN_PIPELINE: "eval", GPUPLAN_STEP: "score" });
    const unknown = sleeper();
    const [a, b] = await described([picked, unknown]);
    expect(a!.gpuplan).toEqual({ run: "run-42", pipeline: "eval", step: "score" });
    expect(b!.gpuplan).toEqual({ run: "run-42", pipeline: null, step: null });
  });

  it.skipIf(!fakeLibsBuilt)(
    "`gpuplan detect --json` marks it too (the slot lock loaded only then)",
    async () => {
      await hold("GPU-aaaaaaaa-0000-4000-8000-000000000007", "train", "fit");
      const pid = sleeper();
      const r = gpuplan(["detect", "--json"], {
        env: fakeEnv(
          "busy.scenario",
          { nvml: fakeLib("nvml") },
          {
            GPUPLAN_FAKE_SCENARIO: scenarioWith("busy.scenario", `nvml.0.processes = ${pid}:1048576`),
            GPUPLAN_LOCK_DIR: lockDir,
          },
        ),
      });
      expect(r.exitCode).toBe(0);
      expect(JSON.parse(r.stdout).gpus[0].processes).toEqual([
        {
          pid,
          usedMemoryBytes: 1048576,
          user: userInfo().username,
          command: "sleep 60",
          gpuplan: { run: "run-42", pipeline: "train", step: "fit" },
        },
      ]);
    },
  );

  it("holders that cannot be read (no flock, no lock dir) mark nothing and break nothing", async () => {
    const gpu = gpuWith([sleeper()]);
    await describeProcesses([gpu], realProc, () => Promise.reject(new Error("no flock")));
    expect(gpu.processes![0]).toMatchObject({ user: userInfo().username, gpuplan: null });
  });
});

describe("GPU processes: what /proc says, from fixture trees", () => {
  /** A /proc with the given files (paths relative to it). */
  function fakeProc(files: Record<string, string | Buffer>): string {
    const root = mkdtempSync(join(tmpdir(), "gpuplan-proc-"));
    for (const [path, text] of Object.entries(files)) {
      mkdirSync(join(root, path, ".."), { recursive: true });
      writeFileSync(join(root, path), text);
    }
    return root;
  }
  /** A stat line whose command name has spaces and parentheses, started `ticks` 1/100 s after boot. */
  const stat = (pid: number, ppid: number, ticks = 500) =>
    `${pid} (a (weird) name) S ${ppid} ${"0 ".repeat(17)}${ticks} 0 0\n`;
  const noHolders = () => Promise.resolve([]);

  it("command lines are kept as the process wrote them (display escapes them), kernel threads as [name], long ones cut", async () => {
    const proc = fakeProc({
      "self/status": "NSpid:\t77\n",
      "10/status": "Uid:\t0\t0\t0\t0\n",
      "10/cmdline": "evil\x1b]0;owned\x07\0--flag\0",
      "11/status": "Uid:\t0\t0\t0\t0\n",
      "11/cmdline": "",
      "11/comm": "kworker/0:1\n",
      "12/status": "Uid:\t4242424\t0\t0\t0\n",
      "12/cmdline": `python\0${"x".repeat(5000)}\0`,
    });
    const gpu = gpuWith([10, 11, 12]);
    await describeProcesses([gpu], { ...realProc, proc }, noHolders);
    expect(gpu.processes!.map((p) => [p.user, p.command?.length ?? 0])).toEqual([
      ["root", 21],
      ["root", 13],
      // A uid /etc/passwd does not name is shown as the number.
      ["4242424", MAX_COMMAND_LENGTH],
    ]);
    expect(gpu.processes![0]!.command).toBe("evil\x1b]0;owned\x07 --flag");
    expect(gpu.processes![1]!.command).toBe("[kworker/0:1]");
  });

  it("a command line that is not UTF-8 has its other bytes spelled out, never U+FFFD (an inventory with it loads again)", async () => {
    const proc = fakeProc({
      "self/status": "NSpid:\t77\n",
      "10/status": "Uid:\t0\t0\t0\t0\n",
      // A Latin-1 file name as an argument: "café" with é as E9.
      "10/cmdline": Buffer.from([...Buffer.from("cat\0caf"), 0xe9, 0]),
    });
    const gpu = gpuWith([10]);
    await describeProcesses([gpu], { ...realProc, proc }, noHolders);
    expect(gpu.processes![0]!.command).toBe("cat caf\\xe9");
  });

  it("in a nested pid namespace the library's pids are the host's: /proc is not asked about them", async () => {
    const proc = fakeProc({
      "self/status": "NSpid:\t4242\t7\n",
      "10/status": "Uid:\t0\t0\t0\t0\n",
      "10/cmdline": "not-this-one\0",
      "10/stat": stat(10, 1),
    });
    const gpu = gpuWith([10]);
    await describeProcesses([gpu], { ...realProc, proc }, noHolders);
    expect(gpu.processes![0]).toMatchObject({ user: null, command: null, gpuplan: null });
  });

  it("the holder must have started before it took the slot: a recycled pid gets no mark", async () => {
    const boot = 1_700_000_000;
    const proc = fakeProc({
      "self/status": "NSpid:\t77\n",
      stat: `cpu 1 2 3\nbtime ${boot}\n`,
      "10/status": "Uid:\t0\t0\t0\t0\n",
      "10/cmdline": "python\0train.py\0",
      "10/stat": stat(10, 20, 900_000),
      // Process 20 started 1000 s after boot.
      "20/stat": stat(20, 1, 100_000),
    });
    const holder = (secondsAfterBoot: number) => () =>
      Promise.resolve([
        {
          pid: 20,
          run: "r",
          pipeline: "p",
          step: "s",
          since: new Date((boot + secondsAfterBoot) * 1000).toISOString(),
        },
      ]);
    const gpu = gpuWith([10]);
    await describeProcesses([gpu], { ...realProc, proc }, holder(1500));
    expect(gpu.processes![0]!.gpuplan).toEqual({ run: "r", pipeline: "p", step: "s" });
    // The slot was taken (by an earlier process 20) 500 s before this process 20 started.
    const recycled = gpuWith([10]);
    await describeProcesses([recycled], { ...realProc, proc }, holder(500));
    expect(recycled.processes![0]!.gpuplan).toBeNull();
  });

  it("an ancestry loop in a corrupt /proc ends (no hang)", async () => {
    const proc = fakeProc({
      "self/status": "NSpid:\t77\n",
      stat: "btime 1700000000\n",
      "10/status": "Uid:\t0\t0\t0\t0\n",
      "10/cmdline": "a\0",
      "10/stat": stat(10, 11),
      "11/stat": stat(11, 10),
    });
    const gpu = gpuWith([10]);
    await describeProcesses([gpu], { ...realProc, proc }, () =>
      Promise.resolve([{ pid: 99, run: "r", pipeline: "p", step: null, since: new Date().toISOString() }]),
    );
    expect(gpu.processes![0]!.gpuplan).toBeNull();
  });
});
