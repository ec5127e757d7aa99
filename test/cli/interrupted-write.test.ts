// Ctrl-C while compile writes a big plan (-o): the temporary file beside the plan is removed, the
// plan from before is left as it was, and the process stops as SIGINT stops it (a shell reads 130)
// — at once, not when the write is over. An attack found `.plan.json.PID.HEX.tmp` files of 11–30 MB
// left behind after each interrupted write; then the interrupt waited for the write's end (3 to 9 s
// for a 75 MB plan), and for a FIFO whose reader had stopped reading, for good.
import { type ChildProcess, execFileSync, spawn } from "node:child_process";
import {
  closeSync,
  constants,
  openSync,
  readdirSync,
  readFileSync,
  readlinkSync,
  statSync,
  writeFileSync,
} from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, tempDir, writeBigPipeline } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

const exitOf = (child: ChildProcess) =>
  new Promise<[number | null, string | null]>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve([child.exitCode, child.signalCode]);
    else child.once("exit", (c, s) => resolve([c, s]));
  });

/**
 * compile -o plan.json; `signal` is sent once the temporary file holds 1 MB (the write is under
 * way: before it, the signal is heard while the file is opened). Times in ms from then.
 */
async function compileToFile(dir: string, file: string, signal?: NodeJS.Signals) {
  const child = spawn(
    process.execPath,
    [join(ROOT, "bin/gpuplan.js"), "compile", file, "--target", "cpu-only", "-o", "plan.json"],
    { cwd: dir, stdio: "ignore" },
  );
  cleanups.push(() => child.kill("SIGKILL"));
  const tmp = () => readdirSync(dir).filter((f) => f.endsWith(".tmp"));
  const writing = () =>
    tmp().some((f) => (statSync(join(dir, f), { throwIfNoEntry: false })?.size ?? 0) > 1_000_000);
  const seen = await new Promise<number | null>((resolve) => {
    const timer = setInterval(() => {
      if (writing()) {
        clearInterval(timer);
        const at = performance.now();
        if (signal) child.kill(signal);
        resolve(at);
      }
    }, 2);
    child.once("exit", () => {
      clearInterval(timer);
      resolve(null);
    });
  });
  const [code, sig] = await exitOf(child);
  return { seen, afterMs: seen === null ? null : performance.now() - seen, code, signal: sig, tmp: tmp() };
}

describe("compile -o, interrupted", () => {
  it("stops within a fraction of the write's time: no temporary file, the plan from before untouched", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = writeBigPipeline(t.dir, 12_000, "-".repeat(200));
    // The write's own time, measured here: a loaded machine slows both runs alike.
    const whole = await compileToFile(t.dir, file);
    expect(whole.code).toBe(0);
    expect(whole.afterMs, "the write ended before it could be timed").not.toBeNull();
    expect(
      whole.afterMs!,
      "the write is too short to tell an early stop: give it more to write",
    ).toBeGreaterThan(400);

    writeFileSync(join(t.dir, "plan.json"), "the plan from before\n");
    const stopped = await compileToFile(t.dir, file, "SIGINT");
    expect(stopped.seen, "the write ended before it could be interrupted").not.toBeNull();
    expect(stopped.signal).toBe("SIGINT");
    expect(stopped.tmp).toEqual([]);
    expect(readFileSync(join(t.dir, "plan.json"), "utf8")).toBe("the plan from before\n");
    // Heard between two writes (every 20 ms), not after the last one; the rest is the exit itself.
    expect(stopped.afterMs!).toBeLessThan(whole.afterMs! / 2);
  }, 120_000);

  it("-o FIFO whose reader stopped reading: Ctrl-C still stops it at once", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = writeBigPipeline(t.dir, 1000);
    const fifo = join(t.dir, "plan.fifo");
    execFileSync("mkfifo", [fifo]);
    // Held open for reading and never read: the plan (over 64 KiB) fills it, and the write waits.
    const held = openSync(fifo, constants.O_RDONLY | constants.O_NONBLOCK);
    cleanups.push(() => closeSync(held));
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "compile", file, "--target", "cpu-only", "-o", fifo],
      { cwd: t.dir, stdio: "ignore" },
    );
    cleanups.push(() => child.kill("SIGKILL"));
    // The FIFO is written without blocking: the writer waits for room with its event loop free.
    const hasFifoOpen = () => {
      try {
        return readdirSync(`/proc/${child.pid}/fd`).some((n) => {
          try {
            return readlinkSync(`/proc/${child.pid}/fd/${n}`) === fifo;
          } catch {
            return false;
          }
        });
      } catch {
        return false;
      }
    };
    const deadline = Date.now() + 30_000;
    while (!hasFifoOpen() && child.exitCode === null && Date.now() < deadline)
      await new Promise((r) => setTimeout(r, 20));
    expect(hasFifoOpen(), "the write never opened the FIFO").toBe(true);
    // Long enough for the 64 KiB to fill; the plan is bigger.
    await new Promise((r) => setTimeout(r, 300));
    expect(child.exitCode, "the whole plan fitted: the write never waited").toBeNull();
    child.kill("SIGINT");
    // A handled signal restarts a blocking write(2): it waited until the reader went away.
    const result = await Promise.race([
      exitOf(child),
      new Promise<string>((r) => setTimeout(() => r("still running 5 s after SIGINT"), 5000)),
    ]);
    expect(result).toEqual([null, "SIGINT"]);
  }, 60_000);
});
