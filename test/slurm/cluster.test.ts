// The shared test cluster itself: up, with the node the other Slurm tests rely on.
import { spawnSync } from "node:child_process";
import { describe, expect, inject, it } from "vitest";
import { sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);

describe.skipIf(!cluster.ok)("the test Slurm cluster", () => {
  it("has one idle node with 4 H100 GPUs, 16 shards, 16 CPUs and 16000 MiB", () => {
    if (!cluster.ok) return;
    const r = spawnSync("scontrol", ["show", "node", "-o"], { env: cluster.env, encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout).toMatch(/NodeName=localhost /);
    expect(r.stdout).toMatch(/ Gres=gpu:h100:4,shard:h100:16 /);
    expect(r.stdout).toMatch(/ CPUTot=16 /);
    expect(r.stdout).toMatch(/ RealMemory=16000 /);
  });
});
