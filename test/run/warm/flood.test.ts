/** A warm worker that floods its stdout: gpuplan reads it no faster than its logs are written. */
import { spawn } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, statSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "../../helpers/cli.js";
import { FLOOD_PIPELINE, floodWorker, peakMiB } from "./flood-worker.js";

let dir: string | undefined;
afterEach(() => {
  if (dir) rmSync(dir, { recursive: true, force: true });
  dir = undefined;
});

const MB = 200;

describe("a warm worker flooding its stdout", () => {
  it(`${MB} MiB of output: gpuplan's memory stays bounded, every line reaches the log, the task completes`, async () => {
    dir = mkdtempSync(join(tmpdir(), "gpuplan-warm-flood-"));
    writeFileSync(join(dir, "worker.mjs"), floodWorker(MB));
    writeFileSync(join(dir, "p.yaml"), FLOOD_PIPELINE);
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "run", "p.yaml", "--lock-dir", join(dir, "locks")],
      { cwd: dir, env: { ...process.env, NO_COLOR: "1", CI: "1" }, stdio: ["ignore", "pipe", "pipe"] },
    );
    let output = "";
    child.stdout.on("data", (d: Buffer) => (output += d.toString()));
    child.stderr.on("data", (d: Buffer) => (output += d.toString()));
    let peak = 0;
    // VmHWM only grows: the last reading before the exit is (nearly) the whole run's peak.
    const poll = setInterval(() => (peak = Math.max(peak, peakMiB(child.pid!))), 50);
    const code = await new Promise<number | null>((resolve) => child.on("exit", resolve));
    clearInterval(poll);
    expect(code, output).toBe(0);
    expect(output).toContain("1 ok, 0 failed");
    // Unbounded (before 938f3eb), it held most of the flood: 860 MiB resident on an idle machine.
    // 300–460 MiB while other tests loaded both cores was not the garbage collector: this test
    // reads gpuplan's stderr slower then, and the plain view queued every line for it. With that
    // bounded too (src/ui/run/output-backlog.ts): 110–115 MiB with three busy loops beside it.
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThan(300);
    const runs = join(dir, ".gpuplan/runs");
    const logs = join(runs, readdirSync(runs)[0]!, "logs");
    for (const log of ["p@w.log", "workers/flood@cpu.log"])
      expect(statSync(join(logs, log)).size).toBe(MB * 1024 * 1024);
  }, 60_000);
});
