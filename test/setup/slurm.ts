// Hands every test file one folder for the shared Slurm test cluster (test/helpers/slurm-cluster.ts
// starts it there on first use) and stops the cluster by pid when the run ends.
import { mkdtempSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { removeClusterBase } from "../helpers/slurm-cluster.js";

declare module "vitest" {
  export interface ProvidedContext {
    slurmBase: string;
  }
}

export default function setup(project: TestProject): () => void {
  // Short: the munge socket path lives under it (sockaddr_un holds 108 bytes).
  const base = mkdtempSync(join(tmpdir(), "gpuplan-slurm-"));
  project.provide("slurmBase", base);
  return () => removeClusterBase(base);
}
