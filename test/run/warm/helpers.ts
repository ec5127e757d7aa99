/** Plans with worker steps on one GPU, and readers for the fixture worker's records. */
import { readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { RunEvent } from "../../../src/run/record/events.js";
import { inventory } from "../../helpers/inventory.js";
import { planFrom } from "../helpers/harness.js";

export const WORKER = resolve(import.meta.dirname, "../../../fixtures/run/warm/worker.mjs");

/** One A100-80GB (cuda:0), 16 threads. */
export const oneGpu = () => inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" }]);

/** A worker step (YAML, inside `steps:`) for the fixture worker. */
export function workerStep(
  id: string,
  options: {
    key?: string;
    load?: number;
    flags?: string[];
    args?: string[];
    keepWarm?: string;
    extra?: string;
  } = {},
): string {
  const argv = ["node", WORKER, "--load-ms", String(options.load ?? 0), ...(options.flags ?? [])];
  return `
      - id: ${id}
        memory: torch
        vram: 4GiB
        worker:
          run: ${JSON.stringify(argv)}
          ${options.key ? `key: ${options.key}` : ""}
        ${options.args ? `run: ${JSON.stringify(options.args)}` : ""}
        ${options.keepWarm ? `keep_warm: ${options.keepWarm}` : ""}
        ${options.extra ?? ""}`;
}

export const warmPlan = (steps: string, registry = "max_pipelines_per_gpu: 1", pipelines = 1) =>
  planFrom(
    `
version: 1
name: warm
registry: { ${registry}, max_parallel_pipelines: 16 }
pipelines:
  - name: p-{n}
    matrix: { n: [${Array.from({ length: pipelines }, (_, i) => String(i + 1).padStart(2, "0")).join(", ")}] }
    steps:${steps}
`,
    oneGpu(),
  );

export interface WorkerRecord {
  what: "load" | "task" | "exit";
  pid: number;
  t: number;
  id?: string;
  pipeline?: string;
  matrix?: Record<string, string>;
  args?: string[];
  cuda?: string | null;
  /** What the worker's fd 3 points to (the slot's lock file when it inherited one). */
  fd3?: string | null;
}

export function workerRecords(dir: string): WorkerRecord[] {
  try {
    return readFileSync(join(dir, "record.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as WorkerRecord);
  } catch {
    return [];
  }
}

/** The gpu.model.* events, as `name reason?` strings in order. */
export const modelEvents = (events: readonly RunEvent[]): string[] =>
  events
    .filter((e) => e.event.startsWith("gpu.model."))
    .map((e) => (e.event === "gpu.model.cache_evict" ? `${e.event} ${e.reason}` : e.event));

export const count = (events: readonly RunEvent[], name: string, reason?: string): number =>
  events.filter((e) => e.event === name && (reason === undefined || ("reason" in e && e.reason === reason)))
    .length;
