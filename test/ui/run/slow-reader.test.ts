// A reader of stderr slower than the steps print (an ssh session, a log collector, a pipe read
// later): the plain view lets at most MAX_WAITING_OUTPUT of step output wait for it, leaves the
// rest out, and says how much it left out and where every line is.
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { createView } from "../../../src/ui/run/index.js";
import { createOutputBacklog, MAX_WAITING_OUTPUT } from "../../../src/ui/run/output-backlog.js";
import { ROOT } from "../../helpers/cli.js";
import { FLOOD_PIPELINE, floodWorker, peakMiB } from "../../run/warm/flood-worker.js";
import { ALL_PIPELINES, busyEvents, captureStream, makePlan, RUN } from "./fixtures.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

describe("the plain view and a slow reader of stderr", () => {
  it("leaves step output out while too much waits, then says how many lines and where they are", async () => {
    const err = captureStream();
    let waiting = 0;
    Object.defineProperty(err, "writableLength", { get: () => waiting });
    const view = await createView("plain", {
      plan: makePlan(),
      pipelines: ALL_PIPELINES,
      out: captureStream(),
      err,
      colorLevel: 0,
    });
    for (const event of busyEvents().slice(0, 4)) view.onEvent(event);
    view.onOutput("plate-1", "segment", "stdout", "shown before the reader lagged");
    waiting = MAX_WAITING_OUTPUT;
    for (let i = 0; i < 2500; i++) view.onOutput("plate-1", "segment", "stdout", `left out ${i}`);
    // Half caught up: still leaving lines out, in one stretch rather than every other line.
    waiting = MAX_WAITING_OUTPUT / 2;
    view.onOutput("plate-1", "segment", "stdout", "left out too");
    waiting = 0;
    view.onOutput("plate-1", "segment", "stdout", "shown once it caught up");
    await view.close(null);
    const text = err.text();
    expect(text).toContain("shown before the reader lagged");
    expect(text).toContain("shown once it caught up");
    expect(text).not.toContain("left out");
    expect(text).toContain(
      `[gpuplan: 2,501 lines of step output not shown (stderr was read slower than the steps printed); the logs under .gpuplan/runs/${RUN}/logs have all of them]`,
    );
    // The note comes before the line that follows the gap.
    expect(text.indexOf("2,501 lines")).toBeLessThan(text.indexOf("shown once it caught up"));
  });

  it("times its notes on the monotonic clock: a wall clock stepped back does not hold them back", () => {
    vi.useFakeTimers();
    try {
      let waiting = MAX_WAITING_OUTPUT;
      const backlog = createOutputBacklog(() => waiting);
      expect(backlog.admit()).toBe(false);
      waiting = 0;
      expect(backlog.admit()).toBe(true);
      expect(backlog.takeUnshown()).toBe(1);
      vi.setSystemTime(Date.now() - 3600_000);
      vi.advanceTimersByTime(6000);
      waiting = MAX_WAITING_OUTPUT;
      expect(backlog.admit()).toBe(false);
      waiting = 0;
      expect(backlog.admit()).toBe(true);
      expect(backlog.takeUnshown()).toBe(1);
    } finally {
      vi.useRealTimers();
    }
  });

  it("notes lines left out at most every few seconds while the reader keeps lagging, and the rest at the end", () => {
    let waiting = 0;
    let now = 0;
    const backlog = createOutputBacklog(
      () => waiting,
      () => now,
    );
    waiting = MAX_WAITING_OUTPUT;
    expect(backlog.admit()).toBe(false);
    waiting = 0;
    expect(backlog.admit()).toBe(true);
    expect(backlog.takeUnshown()).toBe(1);
    waiting = MAX_WAITING_OUTPUT;
    expect(backlog.admit()).toBe(false);
    waiting = 0;
    expect(backlog.admit()).toBe(true);
    // Too soon after the last note: counted on.
    now = 1000;
    expect(backlog.takeUnshown()).toBe(0);
    now = 6000;
    expect(backlog.takeUnshown()).toBe(1);
    waiting = MAX_WAITING_OUTPUT;
    expect(backlog.admit()).toBe(false);
    expect(backlog.takeUnshown()).toBe(0);
    expect(backlog.takeUnshown(true)).toBe(1);
  });

  it.skipIf(process.platform !== "linux")(
    "a worker printing 200 MiB while stderr is not read: gpuplan's memory stays bounded and the run ends",
    async () => {
      dir = mkdtempSync(join(tmpdir(), "gpuplan-slow-reader-"));
      // A warm worker: its output is read from a pipe as fast as its logs take it (a plain step's
      // log file is followed at most 40 MiB/s, and past 16 MiB unread the follower skips ahead).
      // Each task: 3,200 lines of 64 KiB, then the reply.
      writeFileSync(join(dir, "worker.mjs"), floodWorker(200));
      writeFileSync(join(dir, "p.yaml"), FLOOD_PIPELINE);
      const child = spawn(
        process.execPath,
        [join(ROOT, "bin/gpuplan.js"), "run", "p.yaml", "--ui", "plain", "--lock-dir", join(dir, "locks")],
        {
          cwd: dir,
          env: { ...process.env, NO_COLOR: "1", CI: "1" },
          stdio: ["ignore", "ignore", "pipe"],
        },
      );
      // Nobody reads stderr until the run has written its summary's last words… or has held
      // more than it may: then it is read, so that a gpuplan without the bound ends too.
      child.stderr.pause();
      const exited = new Promise<number | null>((resolve) => child.on("exit", resolve));
      let peak = 0;
      const journalEnded = () => {
        try {
          const runs = join(dir!, ".gpuplan/runs");
          const journal = readFileSync(join(runs, readdirSync(runs)[0]!, "journal.jsonl"), "utf8");
          return journal.includes('"type":"end"') || journal.includes('"status":"ok"');
        } catch {
          return false;
        }
      };
      // VmHWM only grows: the last reading before the exit is (nearly) the whole run's peak.
      const poll = setInterval(() => (peak = Math.max(peak, peakMiB(child.pid!))), 20);
      while (!journalEnded() && peak <= 400) await new Promise((r) => setTimeout(r, 50));
      let output = "";
      child.stderr.setEncoding("utf8");
      child.stderr.on("data", (d: string) => {
        if (output.length < 4 * MAX_WAITING_OUTPUT) output += d;
        else output = output.slice(-MAX_WAITING_OUTPUT) + d;
      });
      child.stderr.resume();
      const code = await exited;
      clearInterval(poll);
      expect(code).toBe(0);
      // Holding the 200 MiB for the reader took 600 MiB; a gpuplan run of this step holds ~100.
      expect(peak).toBeLessThan(300);
      expect(output).toMatch(/\[gpuplan: [\d,]+ lines of step output not shown/);
      expect(output).toContain("1 ok, 0 failed");
      const runs = join(dir, ".gpuplan/runs");
      expect(statSync(join(runs, readdirSync(runs)[0]!, "logs/p@w.log")).size).toBe(3200 * 65536);
    },
    60_000,
  );
});
