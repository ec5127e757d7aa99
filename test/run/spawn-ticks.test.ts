// A step's start time from the clock around its spawn must be exactly what /proc/PID/stat says,
// or a resume after `kill -9` of gpuplan would take its own step for a stranger given the same
// pid (step-session.ts compares the two for equality). Checked against the kernel on real spawns.
import { openSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { loadLibc } from "../../src/libc/libc.js";
import { processStartTicks } from "../../src/run/step/process-group.js";
import { loadPosixSpawner } from "../../src/run/step/spawn/posix-spawn.js";
import { bindSpawnTicks } from "../../src/run/step/spawn/spawn-ticks.js";

const linux = process.platform === "linux";

describe.skipIf(!linux)("start ticks from the spawn's clock", () => {
  it("equal /proc/PID/stat's start time for every spawn that does not straddle a tick", async () => {
    const spawner = await loadPosixSpawner();
    expect(spawner).not.toBeNull();
    const devNull = openSync("/dev/null", "r+");
    let known = 0;
    const spawns = 300;
    for (let i = 0; i < spawns; i++) {
      // A process that is still there to be asked: it waits for its stdin, which is /dev/null's
      // end-of-file only after a sleep; `sleep` is there whatever PATH says.
      const started = spawner!.spawn({
        file: "/bin/sleep",
        argv: ["sleep", "5"],
        env: {},
        cwd: null,
        fds: [devNull, devNull, devNull],
      });
      if ("error" in started) throw new Error(started.error);
      const fromProc = processStartTicks(started.pid);
      process.kill(started.pid, "SIGKILL");
      await started.exit;
      expect(fromProc).toEqual(expect.any(Number));
      if (started.startTicks !== null) {
        known++;
        expect(started.startTicks, `spawn ${i}`).toBe(fromProc);
      }
    }
    // A spawn takes about a millisecond and a tick is 10 ms: nearly all are known from the clock.
    expect(known).toBeGreaterThan(spawns / 2);
  });

  it("leaves a spawn that straddles a tick to /proc", async () => {
    const ticks = bindSpawnTicks(await loadLibc());
    const now = ticks.now();
    expect(now).toEqual(expect.any(Number));
    expect(ticks.between(now, now)).toBe(now);
    expect(ticks.between(now, now! + 1)).toBeNull();
    expect(ticks.between(null, now)).toBeNull();
    // Ticks since boot, as /proc/PID/stat counts them: this process started before now.
    expect(processStartTicks(process.pid)!).toBeLessThanOrEqual(now!);
  });
});
