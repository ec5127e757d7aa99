// The test setup's sweep of Slurm test clusters that dead test runs left behind (vitest killed
// before its teardown): a real munged, started the way the cluster starts it, is stopped by its
// pid file and its folder removed when the folder's owner is gone — and left alone when the owner
// lives or the folder has no owner file (not ours to judge).
import { execFileSync, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { chmodSync, existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { claimClusterBase, removeClusterBase, sweepStaleClusters } from "../helpers/slurm-cluster.js";

const hasMunged = spawnSync("sh", ["-c", "command -v munged"], { stdio: "ignore" }).status === 0;
const parent = mkdtempSync(join(tmpdir(), "gpuplan-sweep-"));
const made: string[] = [];
afterAll(() => {
  // Whatever a failed assertion left running.
  for (const base of made) if (existsSync(base)) removeClusterBase(base);
  rmSync(parent, { recursive: true, force: true });
});

/** A cluster folder with a running munged (daemonized, pid file in run/), as startCluster makes it. */
function baseWithMunged(name: string): { base: string; pid: number } {
  const base = join(parent, name);
  made.push(base);
  for (const d of ["munge", "run", "log"]) mkdirSync(join(base, d), { recursive: true });
  chmodSync(parent, 0o755);
  chmodSync(base, 0o755);
  chmodSync(join(base, "munge"), 0o755);
  writeFileSync(join(base, "munge/munge.key"), randomBytes(1024), { mode: 0o600 });
  execFileSync("munged", [
    `--socket=${base}/munge/munge.sock`,
    `--key-file=${base}/munge/munge.key`,
    `--pid-file=${base}/run/munged.pid`,
    `--log-file=${base}/log/munged.log`,
    `--seed-file=${base}/munge/munge.seed`,
  ]);
  return { base, pid: Number(readFileSync(join(base, "run/munged.pid"), "utf8").trim()) };
}

const running = (pid: number): boolean => {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
};

describe.skipIf(!hasMunged || process.getuid?.() !== 0)("sweeping stale Slurm test clusters", () => {
  it("stops the daemons of a dead run's cluster and removes its folder; a live run's and an unowned one stay", () => {
    const dead = baseWithMunged("gpuplan-slurm-deadrn");
    // The owner: a process that has exited (its pid is not running any more).
    const gone = spawnSync(process.execPath, ["-e", "0"]).pid!;
    writeFileSync(join(dead.base, "owner.json"), JSON.stringify({ pid: gone, startTicks: 1 }));
    const live = baseWithMunged("gpuplan-slurm-livern");
    claimClusterBase(live.base);
    const unowned = baseWithMunged("gpuplan-slurm-noownr");
    expect([dead.pid, live.pid, unowned.pid].map(running)).toEqual([true, true, true]);

    expect(sweepStaleClusters(parent)).toEqual([dead.base]);
    expect(running(dead.pid)).toBe(false);
    expect(existsSync(dead.base)).toBe(false);
    expect([live.pid, unowned.pid].map(running)).toEqual([true, true]);
    expect(existsSync(live.base) && existsSync(unowned.base)).toBe(true);

    // A pid reused by another process is not the owner: its start time differs.
    writeFileSync(join(live.base, "owner.json"), JSON.stringify({ pid: process.pid, startTicks: 1 }));
    expect(sweepStaleClusters(parent)).toEqual([live.base]);
    expect(running(live.pid)).toBe(false);

    removeClusterBase(unowned.base);
    expect(running(unowned.pid)).toBe(false);
  });
});
