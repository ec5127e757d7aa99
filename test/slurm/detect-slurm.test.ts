// `gpuplan detect --slurm` against the real test cluster, and its inventory through compile.
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import validateInventory from "../../src/generated/inventory-validator.js";
import validateReport from "../../src/generated/slurm-node-types-validator.js";
import { gpuplan } from "../helpers/cli.js";
import { CLUSTER_CPUS, CLUSTER_GPUS, CLUSTER_MEMORY_MIB, sharedCluster } from "../helpers/slurm-cluster.js";

const cluster = await sharedCluster(inject("slurmBase"));
if (!cluster.ok) console.warn(`gpuplan tests: Slurm tests skipped: ${cluster.reason}`);
const dir = mkdtempSync(join(tmpdir(), "gpuplan-detect-slurm-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const MiB = 1024 ** 2;

describe.skipIf(!cluster.ok)("gpuplan detect --slurm on a real cluster", () => {
  const env = () => (cluster.ok ? { SLURM_CONF: cluster.conf } : {});

  it("reads the node type: GRES h100 × 4 as H100 80GB HBM3, 16 CPUs, 16000 MiB, 4 shards per GPU", () => {
    const r = gpuplan(["detect", "--slurm", "--json"], { env: env() });
    expect(r.stderr).toBe("");
    expect(r.exitCode).toBe(0);
    const report = JSON.parse(r.stdout);
    expect(validateReport(report), JSON.stringify(validateReport.errors)).toBe(true);
    expect(validateInventory(report.nodeTypes[0].inventory), JSON.stringify(validateInventory.errors)).toBe(
      true,
    );
    expect(report.partitions).toEqual([{ name: "debug", isDefault: true, available: "up" }]);
    expect(report.nodeTypes).toHaveLength(1);
    expect(report.nodeTypes[0]).toMatchObject({
      name: `h100x${CLUSTER_GPUS}-${CLUSTER_CPUS}cpu-${CLUSTER_MEMORY_MIB}mib`,
      nodes: ["localhost"],
      usableNodes: 1,
      cpus: CLUSTER_CPUS,
      memoryBytes: CLUSTER_MEMORY_MIB * MiB,
      shardsPerGpu: 4,
      gpus: [
        { gresType: "h100", count: CLUSTER_GPUS, model: "NVIDIA H100 80GB HBM3", memoryBytes: 81559 * MiB },
      ],
    });
  });

  it("prints a table for people, with the next commands", () => {
    const r = gpuplan(["detect", "--slurm", "--partition", "debug"], { env: env() });
    expect(r.exitCode).toBe(0);
    expect(r.stdout).toContain("Slurm node types (partition debug)");
    expect(r.stdout).toContain("4 × NVIDIA H100 80GB HBM3, 79.6 GiB each (gres gpu:h100:4)");
    expect(r.stdout).toContain("gpuplan compile pipeline.yaml --inventory h100x4-16cpu-16000mib.json");
  });

  it("--save writes the inventory compile --inventory plans against: 4 H100s, 16 threads", () => {
    const inv = join(dir, "node.json");
    const saved = gpuplan(["detect", "--slurm", "--save", inv], { env: env() });
    expect(saved.exitCode).toBe(0);
    expect(saved.stderr).toContain(`wrote ${inv}: node type h100x4-16cpu-16000mib`);
    const pipeline = join(dir, "p.yaml");
    writeFileSync(
      pipeline,
      'version: 1\npipelines:\n  - name: p{i}\n    matrix: { i: [0, 1, 2, 3] }\n    steps:\n      - { id: a, run: ["true"], memory: torch, vram: 8GiB }\n',
    );
    const compiled = gpuplan(["compile", pipeline, "--inventory", inv, "-o", join(dir, "plan.json")]);
    expect(compiled.stderr).toContain("4 pipelines (4 on 4 GPUs");
    expect(compiled.exitCode).toBe(0);
    const plan = JSON.parse(readFileSync(join(dir, "plan.json"), "utf8"));
    expect(plan.registry.map((g: { name: string; memoryBytes: number }) => [g.name, g.memoryBytes])).toEqual(
      Array(4).fill(["NVIDIA H100 80GB HBM3", 81559 * MiB]),
    );
    expect(plan.settings.maxParallelPipelines).toBe(CLUSTER_CPUS);
  });

  it("--save - prints the node type's inventory alone on stdout (it wrote a file named -)", () => {
    const r = gpuplan(["detect", "--slurm", "--save", "-"], { env: env(), cwd: dir });
    expect(r.exitCode, r.stderr).toBe(0);
    const inventory = JSON.parse(r.stdout);
    expect(validateInventory(inventory), JSON.stringify(validateInventory.errors)).toBe(true);
    expect(existsSync(join(dir, "-"))).toBe(false);
  });

  it("an unknown partition or node type is a usage error (exit 2) naming the real ones", () => {
    const p = gpuplan(["detect", "--slurm", "--partition", "debgu"], { env: env() });
    expect(p.exitCode).toBe(2);
    expect(p.stderr).toContain("did you mean `debug`?");
    const t = gpuplan(["detect", "--slurm", "--node-type", "a100x8"], { env: env() });
    expect(t.exitCode).toBe(2);
    expect(t.stderr).toContain("node types: h100x4-16cpu-16000mib");
    const noSlurm = gpuplan(["detect", "--partition", "debug"], { env: env() });
    expect(noSlurm.exitCode).toBe(2);
    expect(noSlurm.stderr).toContain("add --slurm");
  });

  it.skipIf(existsSync("/etc/slurm/slurm.conf"))(
    "without SLURM_CONF (and no /etc/slurm/slurm.conf) it says to set SLURM_CONF, exit 2, no stack",
    () => {
      const r = gpuplan(["detect", "--slurm"], { env: { SLURM_CONF: undefined } });
      expect(r.exitCode).toBe(2);
      expect(r.stderr).toContain("set SLURM_CONF");
      expect(r.stderr).not.toContain("    at ");
    },
  );
});
