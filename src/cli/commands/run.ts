/**
 * `gpuplan run PLAN|PIPELINE`: load and verify the plan against this machine, then hand it to the
 * executor with the slot lock, the journal, the events files and the view. The only part of the
 * run that prints or chooses the exit code.
 */
import { closeSync, existsSync, mkdirSync, openSync, writeSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { dirname, join, sep } from "node:path";
import type { DetectInventory, Inventory } from "../../inventory/types.js";
import { didYouMean } from "../../problems/did-you-mean.js";
import { EXIT, UsageError } from "../../problems/errors.js";
import { hasErrors, type Problem } from "../../problems/problem.js";
import type { GpuplanPlan, PlannedPipeline } from "../../schema-types/plan.js";
import type { SourceFile } from "../../source/source-file.js";
import { parseDuration } from "../../units/duration.js";
import { formatHuman } from "../format/human.js";
import { shouldUseColor, writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export interface RunOptions {
  pipeline: string[];
  events?: string;
  wait: boolean;
  lockTimeout?: string;
  resume?: string;
  ui: "auto" | "tui" | "plain" | "json";
  dryRun?: boolean;
}

export default async function run(file: string, options: RunOptions): Promise<number> {
  const lockTimeoutMs = options.lockTimeout === undefined ? undefined : parseDuration(options.lockTimeout);
  if (lockTimeoutMs === undefined && options.lockTimeout !== undefined) {
    throw new UsageError(
      `--lock-timeout: \`${options.lockTimeout}\` is not a duration`,
      "bad-duration",
      "e.g. 30s, 10m, 2h",
    );
  }
  const { RUNS_DIR, createRunDir, openJournal, readJournal } = await import("../../run/journal.js");
  const detect: DetectInventory = async (o) => (await import("../../detect/index.js")).detectInventory(o);

  // 1. The plan: a stored one when resuming, else the file given (compiled in memory when a pipeline).
  let plan: GpuplanPlan;
  let baseDir: string;
  let inventory: Inventory | undefined;
  let recompile: string;
  let runId: string;
  let runDir: string;
  let completed: Set<string> = new Set();
  let resumedPipelines: string[] | undefined;
  if (options.resume !== undefined) {
    runDir =
      options.resume.includes(sep) || options.resume.startsWith(".")
        ? options.resume
        : join(RUNS_DIR, options.resume);
    if (!existsSync(join(runDir, "journal.jsonl"))) {
      throw new UsageError(
        `--resume: no run ${options.resume} (looked in ${runDir})`,
        "unknown-run",
        `runs are in ${RUNS_DIR}/`,
      );
    }
    const state = await readJournal(runDir);
    if (!state.header) throw new UsageError(`--resume: ${runDir} has no run header`, "unknown-run");
    plan = JSON.parse(await readFile(join(runDir, "plan.json"), "utf8")) as GpuplanPlan;
    await checkSamePlan(file, plan, options.resume);
    baseDir = state.header.baseDir;
    runId = state.header.run;
    completed = state.completed;
    resumedPipelines = state.header.pipelines;
    recompile = `gpuplan run ${file} (a new run)`;
  } else {
    const { loadRunInput } = await import("../../run/load-run-input.js");
    const input = await loadRunInput(file, detect);
    if (hasErrors(input.problems) || !input.plan) return reportProblems(input.problems, input.sources);
    plan = input.plan;
    baseDir = input.baseDir;
    inventory = input.inventory;
    recompile = input.recompile;
    const { makeRunId } = await import("../../run/run-id.js");
    runId = makeRunId();
    runDir = join(RUNS_DIR, runId);
  }
  const pipelines = selectPipelines(plan, options.pipeline.length ? options.pipeline : resumedPipelines);

  // 2. Verify against the live machine: never run on the wrong card. CPU-only work needs no GPU.
  const { gpusUsed, verifyPlan } = await import("../../run/verify-plan.js");
  if (gpusUsed(pipelines).length > 0) {
    inventory ??= await detect();
    const problems = verifyPlan(plan, pipelines, inventory, { planFile: file, recompile });
    if (hasErrors(problems)) return reportProblems(problems, []);
  }

  if (options.dryRun) {
    const { describeDryRun } = await import("../../run/dry-run.js");
    const description = describeDryRun(plan, pipelines, baseDir, runId);
    writeOut(options.ui === "json" ? `${JSON.stringify(description, null, 2)}\n` : formatDryRun(description));
    return EXIT.ok;
  }

  // 3. Run: run directory, journal, events, lock, view, signals.
  if (options.resume === undefined) await createRunDir(runDir, plan);
  const journal = await openJournal(runDir);
  if (options.resume === undefined) {
    await journal.append({
      type: "run",
      run: runId,
      startedAt: new Date().toISOString(),
      input: file,
      baseDir,
      pipelines: pipelines.map((p) => p.name),
    });
  }
  const eventFds = [openSync(join(runDir, "events.jsonl"), "a")];
  if (options.events) {
    mkdirSync(dirname(options.events), { recursive: true });
    eventFds.push(openSync(options.events, "a"));
  }
  const needsLock = pipelines.some((p) => p.gpus.length > 0 || p.steps.some((s) => s.uuid !== null));
  // CPU-only runs never load koffi: nothing to lock.
  const lock = needsLock
    ? await (await import("../../run/open-slot-lock.js")).openSlotLock()
    : (await import("../../run/memory-slot-lock.js")).createMemorySlotLock();
  const { resolveUiMode } = await import("../../run/ui/view.js");
  const mode = resolveUiMode(options.ui, Boolean(process.stderr.isTTY));
  const { createView } = await import("../../run/ui/index.js");
  const view = await createView(mode, {
    plan,
    pipelines: pipelines.map((p) => p.name),
    out: process.stdout,
    err: process.stderr,
    color: shouldUseColor(process.stderr),
  });

  // Event lines are written in batches, once per event-loop turn: one write for the many events a
  // burst of short steps makes. (The journal, not this file, is what --resume trusts.)
  const events = createLineBatcher((text) => {
    for (const fd of eventFds) writeSync(fd, text);
  });
  const interrupt = new AbortController();
  const killNow = new AbortController();
  let received: NodeJS.Signals = "SIGINT";
  // First signal: forward it to the steps and wait for them (grace period, then SIGKILL).
  // Second: SIGKILL them now — the user has decided not to wait.
  const onSignal = (signal: NodeJS.Signals) => {
    if (interrupt.signal.aborted) {
      killNow.abort();
      return;
    }
    received = signal;
    interrupt.abort(new Error(`interrupted by ${signal}`));
  };
  process.on("SIGINT", onSignal);
  process.on("SIGTERM", onSignal);
  const { executeRun } = await import("../../run/execute-run.js");
  const { createMemorySampler } = await import("../../run/memory-snapshot.js");
  const { writeWarmInfo } = await import("../../run/warm/worker-info.js");
  const grace = parseDuration(process.env.GPUPLAN_KILL_GRACE ?? "5s") ?? 5000;
  try {
    const started = performance.now();
    const result = await executeRun({
      plan,
      pipelines,
      run: runId,
      runDir,
      baseDir,
      lock,
      journal,
      completed,
      wait: options.wait,
      ...(lockTimeoutMs !== undefined && { lockTimeoutMs }),
      signal: interrupt.signal,
      interruptSignal: () => received,
      killNow: killNow.signal,
      killGraceMs: grace,
      sampler: createMemorySampler(needsLock ? detect : null),
      emit: (event) => {
        events.push(`${JSON.stringify(event)}\n`);
        view.onEvent(event);
      },
      onOutput: (pipeline, step, stream, line) => view.onOutput(pipeline, step, stream, line),
      // Beside the slot files, for `gpuplan locks` (the in-memory lock of a CPU run has no directory).
      ...(needsLock && { onWarmWorkers: (workers) => writeWarmInfo(lock.dir, runId, workers) }),
    }).catch(async (e: unknown) => {
      // Our bug: let go of the terminal (the live view) before the stack is printed.
      const durationMs = Math.round(performance.now() - started);
      const empty = {
        run: runId,
        runDir,
        ok: 0,
        failed: 0,
        skipped: 0,
        interrupted: false,
        durationMs,
        failures: [],
      };
      await view.close(empty).catch(() => undefined);
      throw e;
    });
    await view.close(result.summary);
    if (result.busy) {
      const holders = result.busy.holders;
      const who = holders.length
        ? holders
            .map(
              (h) =>
                `pid ${h.pid} (${h.pipeline}${h.step ? `/${h.step}` : ""}, run ${h.run}, since ${h.since})`,
            )
            .join(", ")
        : "another process";
      writeErr(
        `gpuplan: GPU busy: ${result.busy.gpu} is held by ${who}\n  hint: run without --no-wait to wait for it, or see gpuplan locks\n`,
      );
      return EXIT.busy;
    }
    if (result.summary.interrupted) return EXIT.interrupted;
    return result.summary.failed > 0 ? EXIT.problems : EXIT.ok;
  } finally {
    process.off("SIGINT", onSignal);
    process.off("SIGTERM", onSignal);
    events.flush();
    await journal.close();
    for (const fd of eventFds) closeSync(fd);
  }
}

/** --pipeline names (exact); all pipelines when none is given. */
function selectPipelines(plan: GpuplanPlan, names: readonly string[] | undefined): PlannedPipeline[] {
  if (!names || names.length === 0) return plan.pipelines;
  const known = plan.pipelines.map((p) => p.name);
  for (const name of names) {
    if (!known.includes(name)) {
      const suggestion = didYouMean(name, known);
      throw new UsageError(
        `--pipeline: the plan has no pipeline \`${name}\``,
        "unknown-pipeline",
        suggestion
          ? `did you mean \`${suggestion}\`?`
          : `pipelines: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", …" : ""}`,
      );
    }
  }
  return plan.pipelines.filter((p) => names.includes(p.name));
}

async function reportProblems(problems: Problem[], sources: SourceFile[]): Promise<number> {
  writeErr(formatHuman(problems, sources, paintFor()));
  return EXIT.problems;
}

function formatDryRun(d: import("../../run/dry-run.js").DryRun): string {
  const out: string[] = [
    `gpuplan run --dry-run: ${d.pipelines.length} pipelines of ${d.plan}; nothing was started`,
  ];
  for (const p of d.pipelines) {
    out.push("", `pipeline ${p.name}${p.gpus.length ? ` on ${p.gpus.join(", ")}` : " on cpu"}`);
    for (const s of p.steps) {
      out.push(
        `  ${s.id} (${s.device}${s.exclusive ? ", exclusive" : ""})${s.needs.length ? ` after ${s.needs.join(", ")}` : ""}`,
      );
      out.push(`    run: ${s.command}`, `    cwd: ${s.cwd}`);
      for (const [k, v] of Object.entries(s.env)) out.push(`    ${k}=${v}`);
      if (s.unset.length) out.push(`    unset: ${s.unset.join(" ")}`);
    }
  }
  return `${out.join("\n")}\n`;
}

/**
 * A resumed run runs the plan it started with (stored in its directory), so that a pipeline file
 * compiled in memory cannot change under it. A plan file given now must be that same plan.
 */
async function checkSamePlan(file: string, stored: GpuplanPlan, run: string): Promise<void> {
  if (!file.endsWith(".json")) return;
  let given: GpuplanPlan;
  try {
    given = JSON.parse(await readFile(file, "utf8")) as GpuplanPlan;
  } catch {
    return;
  }
  if (JSON.stringify(given.pipelines) !== JSON.stringify(stored.pipelines)) {
    throw new UsageError(
      `--resume: run ${run} was started from a different plan than ${file}`,
      "resume-plan-changed",
      `resume with the plan it started with (kept in its run directory as plan.json), or start a new run without --resume`,
    );
  }
}

/** Collects lines and writes them together on the next turn of the event loop (or at flush()). */
function createLineBatcher(write: (text: string) => void): { push(line: string): void; flush(): void } {
  let lines: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    write(text);
  };
  return {
    push(line) {
      lines.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
