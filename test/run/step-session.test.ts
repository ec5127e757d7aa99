// A step is ended through its whole session, not only its process group: GNU `timeout` and `bash`
// with `set -m` move what they start into a group of their own, which a signal to the step's
// group never reaches, and which kept the step's GPU slot (its inherited lock descriptors) after
// the step was reported timed out or interrupted.
import { spawn } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { readBootId } from "../../src/run/step/boot-id.js";
import { isGroupAlive, processStartTicks, procStatFields } from "../../src/run/step/process-group.js";
import { runStepProcess } from "../../src/run/step/step-process.js";
import { isStepSessionAlive, liveSessions, sessionGroups } from "../../src/run/step/step-session.js";
import { tempDir } from "../helpers/cli.js";
import { otherBootId } from "./helpers/boot-ids.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups.reverse()) c();
  cleanups = [];
});

/** Alive and not a zombie (a container's PID 1 may never reap what it inherits). */
const isRunning = (pid: number) => {
  const fields = procStatFields(pid);
  return fields !== null && fields[0] !== "Z";
};

/** Kill `pids` after the test, whatever it left. */
const reap = (pids: () => number[]) =>
  cleanups.push(() => {
    for (const pid of pids()) {
      try {
        process.kill(pid, "SIGKILL");
      } catch {
        // Gone.
      }
    }
  });

async function until(what: () => boolean, ms = 10_000): Promise<void> {
  const deadline = Date.now() + ms;
  while (!what()) {
    if (Date.now() > deadline) throw new Error("timed out waiting");
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** The pids a step wrote to `file`, one a line. */
const pidsIn = (file: string) =>
  existsSync(file)
    ? readFileSync(file, "utf8")
        .split("\n")
        .filter((l) => /^\d+$/.test(l))
        .map(Number)
    : [];

/** A recorded step, and the environment gpuplan starts it with (step-env.ts). */
const STEP = { run: "20260101T000000Z-abcdef", pipeline: "p", step: "s" };
const STEP_ENV = { GPUPLAN_RUN: STEP.run, GPUPLAN_PIPELINE: STEP.pipeline, GPUPLAN_STEP: STEP.step };

describe.skipIf(process.platform !== "linux")("a step's session", () => {
  const setup = () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const pidFile = join(t.dir, "pids");
    reap(() => pidsIn(pidFile));
    return {
      pidFile,
      base: {
        shell: false,
        cwd: t.dir,
        env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
        logPath: join(t.dir, "s.out.log"),
        stderrPath: join(t.dir, "s.err.log"),
        killGraceMs: 300,
      },
    };
  };

  it("a timed-out step's child in a group of its own (bash set -m) is ended with it", async () => {
    const { pidFile, base } = setup();
    const result = await runStepProcess({
      ...base,
      argv: ["bash", "-c", `set -m; sleep 30 & echo $! > ${pidFile}; wait`],
      // Long enough for bash to have written the pid file on a loaded runner.
      timeoutMs: 2000,
    });
    expect(result.timedOut).toBe(true);
    const [sleeper] = pidsIn(pidFile);
    expect(sleeper).toEqual(expect.any(Number));
    expect(isRunning(sleeper!)).toBe(false);
  });

  it("an interrupted step's `timeout` (setpgid) and what it runs are ended with it", async () => {
    const { pidFile, base } = setup();
    const stop = new AbortController();
    const running = runStepProcess({
      ...base,
      // The inner sh writes its own pid, then the sleep it becomes; `timeout` is its parent.
      argv: ["sh", "-c", `timeout 600 sh -c 'echo $$ > ${pidFile}; exec sleep 30'`],
      signal: stop.signal,
      interruptSignal: () => "SIGINT",
    });
    await until(() => pidsIn(pidFile).length > 0);
    const [sleeper] = pidsIn(pidFile);
    const timeoutPid = Number(procStatFields(sleeper!)?.[1]);
    reap(() => [timeoutPid]);
    // In a group of its own, not the step's.
    expect(Number(procStatFields(timeoutPid)?.[2])).toBe(timeoutPid);
    stop.abort();
    const result = await running;
    expect(result.interrupted).toBe(true);
    expect(isRunning(sleeper!)).toBe(false);
    expect(isRunning(timeoutPid)).toBe(false);
  });

  it("is alive while a process the step moved to a group of its own runs after the step's own group is gone", async () => {
    // A session leader that starts a sleep in a group of its own and exits at once.
    const leader = spawn("bash", ["-c", "set -m; sleep 30 > /dev/null & echo $!"], {
      detached: true,
      stdio: ["ignore", "pipe", "ignore"],
      // What every step starts with, and what it starts inherits.
      env: { ...process.env, ...STEP_ENV },
    });
    let out = "";
    leader.stdout.on("data", (d) => {
      out += String(d);
    });
    const ticks = await new Promise<number | null>((resolve) => {
      leader.on("spawn", () => resolve(processStartTicks(leader.pid!)));
    });
    await new Promise((resolve) => leader.on("close", resolve));
    const sleeper = Number(out.trim());
    reap(() => [sleeper]);
    const sid = leader.pid!;
    expect(isGroupAlive(sid)).toBe(false);
    expect(sessionGroups(sid)).toEqual([sleeper]);
    const step = { ...STEP, pid: sid, startTicks: ticks };
    expect(isStepSessionAlive(step)).toBe(true);
    expect(isStepSessionAlive(step, liveSessions())).toBe(true);
    // Another step's (or run's) session that was given the same pid is not this one.
    expect(isStepSessionAlive({ ...step, step: "other" })).toBe(false);
    expect(isStepSessionAlive({ ...step, run: "another-run" }, liveSessions())).toBe(false);
    // A process that started before the step's leader cannot be of its session.
    expect(isStepSessionAlive({ ...step, startTicks: processStartTicks(sleeper)! + 1 })).toBe(false);
    process.kill(sleeper, "SIGKILL");
    await until(() => !isRunning(sleeper));
    expect(isStepSessionAlive(step)).toBe(false);
    expect(isStepSessionAlive(step, liveSessions())).toBe(false);
  });

  it("a step recorded in another boot is gone, though a live session leader of the same start time holds its pid", async () => {
    // After a reboot the kernel gives pids out again from the start, with start ticks as small as
    // the old boot's: a leader with the recorded pid, start time and environment is not the step.
    const leader = spawn("sleep", ["30"], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, ...STEP_ENV },
    });
    await new Promise((resolve) => leader.on("spawn", resolve));
    reap(() => [leader.pid!]);
    const now = readBootId();
    expect(now, "this test needs /proc/sys/kernel/random/boot_id").not.toBeNull();
    const step = { ...STEP, pid: leader.pid!, startTicks: processStartTicks(leader.pid!) };
    expect(isStepSessionAlive({ ...step, bootId: now })).toBe(true);
    // An older journal's attempt, without a boot id: the pid and start time decide, as before.
    expect(isStepSessionAlive(step)).toBe(true);
    expect(isStepSessionAlive({ ...step, bootId: otherBootId(now!) })).toBe(false);
    expect(isStepSessionAlive({ ...step, bootId: otherBootId(now!) }, liveSessions())).toBe(false);
  });

  it("without a recorded start time, a live leader at the pid is the step's only if its environment says so", async () => {
    // A journal whose start entry lost its startTicks (edited, or a step gone before they were
    // read) named pid 1 or a login shell, and --resume waited on it for ever.
    const stranger = spawn("sleep", ["30"], {
      detached: true,
      stdio: "ignore",
      env: { PATH: process.env.PATH },
    });
    const step = spawn("sleep", ["30"], {
      detached: true,
      stdio: "ignore",
      env: { ...process.env, ...STEP_ENV },
    });
    await Promise.all([stranger, step].map((c) => new Promise((resolve) => c.on("spawn", resolve))));
    reap(() => [stranger.pid!, step.pid!]);
    expect(isStepSessionAlive({ ...STEP, pid: stranger.pid!, startTicks: null })).toBe(false);
    expect(isStepSessionAlive({ ...STEP, pid: stranger.pid!, startTicks: null }, liveSessions())).toBe(false);
    expect(isStepSessionAlive({ ...STEP, pid: step.pid!, startTicks: null })).toBe(true);
    // With its start time recorded, the pid and start time decide, as before.
    expect(
      isStepSessionAlive({ ...STEP, pid: stranger.pid!, startTicks: processStartTicks(stranger.pid!) }),
    ).toBe(true);
  });

  it("reads /proc/PID/stat fields after the last ')' of the command name", () => {
    const fields = procStatFields(process.pid);
    expect(fields?.[0]).toMatch(/^[RSDTtXZIPWK]$/);
    // The parent pid, not the session id: a session whose leader is outside this pid namespace (a
    // container's CI runner) reads as session 0, which says nothing about the parsing.
    expect(Number(fields?.[1])).toBe(process.ppid);
    expect(Number(fields?.[19])).toBeGreaterThan(0);
    expect(procStatFields(2 ** 30)).toBeNull();
  });
});
