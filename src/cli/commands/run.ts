/**
 * `gpuplan run PLAN|PIPELINE`: parse the options, prepare the run (src/run/prepare/prepare-run.ts), carry
 * it out (src/run/run-session.ts), print what went wrong and choose the exit code — the
 * only part of the run that prints or decides how it ends.
 */
import type { DetectInventory } from "../../inventory/types.js";
import { EXIT, UsageError } from "../../problems/errors.js";
import type { Problem } from "../../problems/problem.js";
import type { SourceFile } from "../../source/source-file.js";
import { formatHuman } from "../../ui/problems/human.js";
import { parseDuration } from "../../units/duration.js";
import { writeErr, writeOut } from "../output.js";
import { colorLevelOf, paintFor } from "../paint.js";

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
  const detect: DetectInventory = async (o) => (await import("../../detect/index.js")).detectInventory(o);

  const { prepareRun } = await import("../../run/prepare/prepare-run.js");
  const prepared = await prepareRun({
    file,
    pipelines: options.pipeline,
    ...(options.resume !== undefined && { resume: options.resume }),
    detect,
  });
  if (!prepared.ok) return reportProblems(prepared.problems, prepared.sources);
  // Warnings of the in-memory compile (a GPU step that falls back to the CPU, say) go out as
  // `gpuplan compile` would print them, on stderr, before the run.
  if (prepared.warnings.length > 0)
    writeErr(formatHuman(prepared.warnings, prepared.sources, await paintFor()));
  const { plan, pipelines, baseDir, runId } = prepared.run;

  if (options.dryRun) {
    const { describeDryRun } = await import("../../run/prepare/dry-run.js");
    const description = describeDryRun(plan, pipelines, baseDir, runId);
    const { formatDryRun } = await import("../../ui/dry-run-text.js");
    writeOut(
      options.ui === "json"
        ? `${JSON.stringify(description, null, 2)}\n`
        : formatDryRun(description, plan.registry),
    );
    return EXIT.ok;
  }

  const { runSession } = await import("../../run/run-session.js");
  const result = await runSession(prepared.run, {
    input: file,
    ...(options.events && { eventsFile: options.events }),
    wait: options.wait,
    ...(lockTimeoutMs !== undefined && { lockTimeoutMs }),
    ui: options.ui,
    terminal: { out: process.stdout, err: process.stderr, colorLevel: colorLevelOf(process.stderr) },
    killGraceMs: parseDuration(process.env.GPUPLAN_KILL_GRACE ?? "5s") ?? 5000,
    detect,
  });
  if (result.busy) {
    const { busyGpuMessage } = await import("../../ui/busy-gpu-message.js");
    const { message, hint } = busyGpuMessage(result.busy, plan.registry);
    writeErr(`gpuplan: ${message}\n  hint: ${hint}\n`);
    return EXIT.busy;
  }
  if (result.summary.interrupted) return EXIT.interrupted;
  return result.summary.failed > 0 ? EXIT.problems : EXIT.ok;
}

async function reportProblems(problems: Problem[], sources: SourceFile[]): Promise<number> {
  writeErr(formatHuman(problems, sources, await paintFor()));
  return EXIT.problems;
}
