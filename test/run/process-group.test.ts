// Whether a step's process group still runs: asked once or twice per step, so once posix_spawn's C
// library is loaded it is asked through kill(2) there, a gone group answered by a return value
// instead of a thrown ErrnoException; the answers are Node's.
import { spawn } from "node:child_process";
import { afterEach, describe, expect, it, vi } from "vitest";
import { isGroupAlive, processStartTicks } from "../../src/run/step/process-group.js";
import { loadPosixSpawner } from "../../src/run/step/spawn/posix-spawn.js";
import { isStepSessionAlive } from "../../src/run/step/step-session.js";

afterEach(() => {
  vi.restoreAllMocks();
});

/** A `sleep` leading a process group of its own, and how to end it and wait until it is gone. */
function groupLeader() {
  const child = spawn("sleep", ["30"], { detached: true, stdio: "ignore" });
  const exited = new Promise((resolve) => child.on("exit", resolve));
  return {
    pgid: child.pid!,
    end: async () => {
      process.kill(-child.pid!, "SIGKILL");
      await exited;
    },
  };
}

describe.skipIf(process.platform !== "linux")("step process groups", () => {
  it("alive while it runs, gone once it has ended, its start time read from /proc", async () => {
    const spawner = await loadPosixSpawner();
    const kill = vi.spyOn(process, "kill");
    const leader = groupLeader();
    const ticks = processStartTicks(leader.pgid);
    expect(ticks).toEqual(expect.any(Number));
    expect(isGroupAlive(leader.pgid)).toBe(true);
    const step = { run: "r", pipeline: "p", step: "s", pid: leader.pgid, startTicks: ticks };
    expect(isStepSessionAlive(step)).toBe(true);
    // Another process's start time: not the step's group, however alive.
    expect(isStepSessionAlive({ ...step, startTicks: ticks! + 1 })).toBe(false);
    kill.mockClear();
    await leader.end();
    expect(isGroupAlive(leader.pgid)).toBe(false);
    expect(isStepSessionAlive(step)).toBe(false);
    expect(processStartTicks(leader.pgid)).toBeNull();
    // With glibc's posix_spawn bound, none of these went through process.kill (which throws for a gone group).
    if (spawner) expect(kill.mock.calls.filter(([, signal]) => signal === 0)).toEqual([]);
  });
});
