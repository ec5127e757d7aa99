// A scheduler stops a whole job at once (Slurm's node failure, scancel): the step may die of the
// signal and be reaped before gpuplan's own handler for it has run. It is reported interrupted
// with the run (and so resumed), not failed with exit 143 — CI once saw the follower of a
// requeued task report the run failed that way.
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { runStepProcess } from "../../src/run/step/step-process.js";
import { tempDir } from "../helpers/cli.js";

let cleanup: (() => void) | undefined;
afterEach(() => cleanup?.());

const base = () => {
  const t = tempDir();
  cleanup = t.cleanup;
  return {
    shell: false,
    cwd: t.dir,
    env: { PATH: process.env.PATH ?? "/usr/bin:/bin" },
    logPath: join(t.dir, "s.out.log"),
    stderrPath: join(t.dir, "s.err.log"),
    killGraceMs: 300,
  };
};

describe("a step a stop signal ended just before the run's interrupt", () => {
  it.each([
    ["killed by SIGTERM", ["sh", "-c", "kill -TERM $$"]],
    ["exit 143, as a shell reports SIGTERM", ["sh", "-c", "exit 143"]],
  ])("%s, the run interrupted a moment later: interrupted, not failed", async (_, argv) => {
    const stop = new AbortController();
    const ending = await runStepProcess({
      ...base(),
      argv,
      signal: stop.signal,
      interruptSignal: () => "SIGTERM",
      // The run's own SIGTERM is handled a little after the step is reaped.
      onStart: () => setTimeout(() => stop.abort(), 100),
    });
    expect(ending.interrupted).toBe(true);
  });

  it("one that exits 143 with no interrupt coming is a failure, reported after the short wait", async () => {
    const ending = await runStepProcess({
      ...base(),
      argv: ["sh", "-c", "exit 143"],
      signal: new AbortController().signal,
    });
    expect(ending.interrupted).toBe(false);
    expect(ending.exitCode).toBe(143);
  });
});
