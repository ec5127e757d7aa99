/**
 * The executor: runs the selected pipelines of a verified plan under the GPU slot lock.
 *
 * Scheduling, in one paragraph: every pipeline starts at once as an async task. A GPU pipeline
 * first takes one slot of each of its GPUs (in UUID order, the same order in every gpuplan
 * process, so two multi-GPU pipelines can never hold one card each and wait for the other's),
 * then a worker (`settings.workers` bounds the pipelines running on the host). Waiting for a
 * slot does not hold a worker, so a busy GPU never stops CPU pipelines or other GPUs (the price:
 * with fewer workers than slots, a pipeline may hold its slot while it waits for a worker). Inside a
 * pipeline, steps run one at a time in topological order of `needs` (a pipeline is a chain of
 * framework processes sharing one memory budget; running two at once would break the budget).
 * An exclusive step upgrades every lease to all slots first and downgrades after. A failed step
 * fails its pipeline: the rest of its steps are skipped; other pipelines go on. A worker step
 * sends a task to a warm worker (warm/worker-pool.ts) instead of spawning: a lease that a live
 * worker was started with outlives its pipeline (the pool keeps it, or it goes straight to the
 * next pipeline of this run waiting for that GPU), and an exclusive step evicts its GPU's workers.
 *
 * The core never prints: everything goes out as events (`emit`) and output lines (`onOutput`).
 *
 * The parts, in src/run/executor/: run-context (what the pipelines share), slot-handover (leases
 * kept for warm workers), run-pipeline with pipeline-slots and host-worker, run-step-with-retries
 * with exclusive-upgrade, run-attempt with memory-snapshots. This file starts the pipelines and
 * sums the run up.
 */
import { RUN_EVENTS_SCHEMA } from "../record/events.js";
import type { ExecuteOptions, ExecuteResult } from "./execute-options.js";
import { RunContext } from "./run-context.js";
import { runPipeline } from "./run-pipeline.js";

export type { ExecuteOptions, ExecuteResult } from "./execute-options.js";

/** Run the pipelines to the end (or to a stop) and say how it went; bugs reject. */
export async function executeRun(options: ExecuteOptions): Promise<ExecuteResult> {
  const started = performance.now();
  const ctx = new RunContext(options);
  const { run, runDir } = options;
  ctx.emit({
    event: "run.start",
    pipeline: null,
    step: null,
    device: null,
    schema: RUN_EVENTS_SCHEMA,
    pipelines: options.pipelines.map((p) => p.name),
    runDir,
  });
  try {
    const tasks = options.pipelines.map((p) => runPipeline(ctx, p));
    const outcomes = await Promise.allSettled(tasks);
    await ctx.settle();
    const bug = outcomes.find((o): o is PromiseRejectedResult => o.status === "rejected");
    if (bug) throw bug.reason;
  } finally {
    // Every pipeline is done: warm workers stop (`shutdown`) and give back the slots they kept.
    await ctx.pool.shutdown();
    await ctx.settle();
    ctx.dispose();
  }
  const { counts, failures, busy } = ctx;
  const interrupted = options.signal?.aborted === true;
  const durationMs = Math.round(performance.now() - started);
  await options.journal.append({ type: "end", ts: new Date().toISOString(), interrupted, ...counts });
  ctx.emit({
    event: "run.end",
    pipeline: null,
    step: null,
    device: null,
    durationMs,
    status: interrupted || busy ? "interrupted" : counts.failed > 0 ? "failed" : "ok",
    ...counts,
  });
  return {
    summary: { run, runDir, ...counts, interrupted, durationMs, failures },
    busy,
  };
}
