/** Plans from pipeline text, and the executor run in a temporary directory with the real slot lock (recorded). */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import {
  type ExecuteOptions,
  type ExecuteResult,
  executeRun,
} from "../../../src/run/executor/execute-run.js";
import type { RunEvent } from "../../../src/run/record/events.js";
import { createRunDir, openJournal } from "../../../src/run/record/journal.js";
import type { GpuplanPlan } from "../../../src/schema-types/plan.js";
import { compileText, inventory } from "../../helpers/inventory.js";
import { createRecordingLock, type RecordingLock } from "./recording-lock.js";

export const FIXTURES = resolve(import.meta.dirname, "../../../fixtures/run");

/** One A100-80GB GPU and a 16-thread CPU: every GPU pipeline lands on the same card. */
export const oneGpu = () => inventory([{ name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" }]);

/** Two A100-80GB GPUs (UUIDs GPU-…0 and GPU-…1 from the short form) and a 16-thread CPU. */
export const twoGpus = () =>
  inventory([
    { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" },
    { name: "NVIDIA A100-SXM4-80GB", memory: "80GiB" },
  ]);

/** Compile pipeline YAML (steps in fixtures/run) against an inventory; fails loudly on errors. */
export function planFrom(text: string, inv = twoGpus()): GpuplanPlan {
  const result = compileText(text, inv);
  if (!result.plan) throw new Error(result.problems.map((p) => p.message).join("\n"));
  return result.plan;
}

export interface Harness extends ExecuteResult {
  events: RunEvent[];
  output: { pipeline: string; step: string; stream: string; line: string }[];
  lock: RecordingLock;
  runDir: string;
  dir: string;
  names: (event: string) => string[];
  cleanup: () => void;
}

/**
 * Run a plan through the executor in a fresh temp dir (or `dir`; cwd of steps: fixtures/run), with
 * the real slot lock on `<dir>/locks` unless a test brings its own.
 */
export async function execute(
  plan: GpuplanPlan,
  {
    dir: givenDir,
    lock: givenLock,
    ...overrides
  }: Partial<ExecuteOptions> & { lock?: RecordingLock; dir?: string } = {},
): Promise<Harness> {
  const dir = givenDir ?? mkdtempSync(join(tmpdir(), "gpuplan-run-"));
  // A run folder of its own, as every run has (createRunDir refuses one that exists): a second
  // run in the same `dir` gets run-2.
  let runDir = join(dir, "run");
  for (let n = 2; existsSync(runDir); n++) runDir = join(dir, `run-${n}`);
  await createRunDir(runDir, plan);
  const journal = await openJournal(runDir);
  // As a run session does: a journal starts with its run's header.
  await journal.append({
    type: "run",
    run: "test-run",
    startedAt: "",
    input: "",
    baseDir: FIXTURES,
    pipelines: [],
  });
  const events: RunEvent[] = [];
  const output: Harness["output"] = [];
  const lock = givenLock ?? createRecordingLock(join(dir, "locks"));
  // Closed even when the run throws (a test expecting an internal error), or GC closes it later
  // with Node's DEP0137 warning in the middle of the test output.
  const result = await executeRun({
    plan,
    pipelines: plan.pipelines,
    run: "test-run",
    runDir,
    baseDir: FIXTURES,
    wait: true,
    killGraceMs: 300,
    emit: (e) => events.push(e),
    onOutput: (pipeline, step, stream, line) => output.push({ pipeline, step, stream, line }),
    journal,
    env: { ...process.env, RECORD_FILE: join(dir, "record.jsonl") },
    ...overrides,
    lock,
  }).finally(() => journal.close());
  return {
    ...result,
    events,
    output,
    lock,
    runDir,
    dir,
    names: (event) => events.filter((e) => e.event === event).map((e) => `${e.pipeline}/${e.step}`),
    cleanup: () => rmSync(dir, { recursive: true, force: true }),
  };
}

export interface Record {
  what: "enter" | "exit";
  name: string;
  t: number;
  pid: number;
  cuda: string | null;
  device: string | null;
}

/** What fixtures/run/record.mjs wrote, in order. */
export function records(dir: string): Record[] {
  try {
    return readFileSync(join(dir, "record.jsonl"), "utf8")
      .split("\n")
      .filter(Boolean)
      .map((l) => JSON.parse(l) as Record);
  } catch {
    return [];
  }
}

/** Most records between enter and exit at once (the steps running concurrently). */
export function maxConcurrent(list: readonly Record[], filter: (r: Record) => boolean = () => true): number {
  let now = 0;
  let most = 0;
  for (const r of [...list].filter(filter).sort((a, b) => a.t - b.t || (a.what === "exit" ? -1 : 1))) {
    now += r.what === "enter" ? 1 : -1;
    most = Math.max(most, now);
  }
  return most;
}
