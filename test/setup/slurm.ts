// Hands every test file one folder for the shared Slurm test cluster (test/helpers/slurm-cluster.ts
// starts it there on first use) and stops the cluster by pid when the run ends; first, it stops and
// removes the clusters of earlier runs that died before their teardown.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { claimClusterBase, removeClusterBase, sweepStaleClusters } from "../helpers/slurm-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    slurmBase: string;
  }
}

export default function setup(project: TestProject): () => void {
  // Clusters of earlier runs killed before their teardown (vitest killed, a CI timeout).
  for (const swept of sweepStaleClusters(tmpdir()))
    console.warn(`gpuplan tests: stopped the Slurm test cluster a dead test run left in ${swept}`);
  // Short: the munge socket path lives under it (sockaddr_un holds 108 bytes).
  const base = mkdtempSync(join(tmpdir(), "gpuplan-slurm-"));
  claimClusterBase(base);
  project.provide("slurmBase", base);
  return () => removeClusterBase(base);
}
