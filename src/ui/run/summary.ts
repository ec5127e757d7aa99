/** The final words of a run — the same text for the plain and the live view, on stderr. */

import type { StepFailure } from "../../run/outcome/run-tally.js";
import type { OverReservation } from "../../schema-types/run-events.js";
import { displayCut, escapeText } from "../../text/safe-text.js";
import { shellWord } from "../../text/shell-word.js";
import { formatDuration } from "../../units/duration.js";
import { formatSize } from "../../units/size.js";
import { cutTailLine, escapeOutputLine } from "../output-line.js";
import type { Paint } from "../paint.js";
import { describeFailure, stepName } from "./format.js";
import type { RunEnding, RunSummary } from "./view.js";

/** How many stderr lines of a failed step are shown; the log has the rest. */
const STDERR_TAIL_LINES = 10;
/**
 * Past this many, attempts over their reservation are told per step id, one line each: a warm
 * worker's model counts for every task it serves, so one low `vram` can mean thousands.
 */
const OVER_RESERVATION_LINES = 10;
/**
 * Failures told in full (reason, stderr tail, log, hint); the rest are grouped by step and
 * reason, one line each, so that a thousand plates failing the same way stay readable.
 */
const FAILURE_BLOCKS = 10;
/** Lines of grouped failures at most; past them one line counts what is left (events.jsonl has all). */
const FAILURE_GROUP_LINES = 20;

/** Summary line, run dir, then one block per failure: where, why, its last stderr lines, log, hint. */
export function formatSummary(summary: RunSummary, paint: Paint, ending?: RunEnding): string {
  // A blank line first: the summary follows a stream of step lines (plain) or the last frame (live).
  const lines: string[] = [""];
  const counts = [
    paint.green(`${summary.ok} ok`),
    summary.failed > 0 ? paint.red(`${summary.failed} failed`) : `${summary.failed} failed`,
    `${summary.skipped} skipped`,
  ].join(", ");
  const verb = summary.interrupted ? paint.yellow("interrupted") : summary.failed > 0 ? "failed" : "done";
  lines.push(
    `${paint.bold(`run ${escapeText(summary.run)}`)} ${verb}: ${counts} in ${formatDuration(summary.durationMs)}`,
  );
  lines.push(`${paint.dim("run dir:")} ${escapeText(summary.runDir)}`);
  for (const f of summary.failures.slice(0, FAILURE_BLOCKS)) lines.push("", ...failureBlock(f, paint));
  const rest = summary.failures.slice(FAILURE_BLOCKS);
  if (rest.length > 0) lines.push("", ...groupedFailureLines(rest, summary.runDir, paint));
  // Over their reservation: not failures, but what the next plan's estimates should learn from.
  const over = summary.overReservations ?? [];
  if (over.length > 0) lines.push("");
  lines.push(...overReservationLines(over, paint));
  if (over.length > 0)
    lines.push(
      `  ${paint.dim("hint:")} raise \`vram\` to what the step uses and recompile, so that admission does not overcommit the GPU`,
    );
  // A run whose journal is gone cannot be resumed: the records-incomplete error after it says so.
  if (summary.interrupted && ending?.resumable !== false) lines.push("", resumeLine(summary));
  return `${lines.join("\n")}\n`;
}

/**
 * How to go on. Slurm jobs scancel could not cancel may still run the steps: a resume now is
 * refused (slurm-run-active), so the line says what comes first rather than offer it bare.
 */
function resumeLine(summary: RunSummary): string {
  const resume = `gpuplan run --resume ${escapeText(shellWord(summary.run))}`;
  const jobs = summary.uncancelledJobs ?? [];
  if (jobs.length === 0) return `Resume with: ${resume}`;
  // Job ids are what sbatch printed: outside text.
  const ids = jobs.map((j) => escapeText(shellWord(j))).join(" ");
  const one = jobs.length === 1;
  return (
    `Slurm job${one ? "" : "s"} ${ids} may still be queued or running, and --resume is refused until ${one ? "it has" : "they have"} left Slurm: ` +
    `scancel ${ids} (or wait for ${one ? "it" : "them"}: gpuplan status ${escapeText(shellWord(summary.run))}), then resume with: ${resume}`
  );
}

function failureBlock(f: StepFailure, paint: Paint): string[] {
  const lines = [
    `${paint.red("✗")} ${paint.bold(stepName(f.pipeline, f.step))} on ${escapeText(f.device)}: ${describeFailure(f)}`,
  ];
  const tail = f.stderrTail.slice(-STDERR_TAIL_LINES);
  if (tail.length > 0) {
    lines.push(`  ${paint.dim("last stderr lines:")}`);
    for (const line of tail) lines.push(`    ${escapeOutputLine(cutTailLine(line), paint.level > 0)}`);
  }
  // No log when the step never started (it timed out waiting for its GPU).
  if (f.logPath) lines.push(`  ${paint.dim(f.stderrPath ? "stdout:" : "log:")}  ${escapeText(f.logPath)}`);
  if (f.stderrPath) lines.push(`  ${paint.dim("stderr:")}  ${escapeText(f.stderrPath)}`);
  if (f.hint) lines.push(`  ${paint.dim("hint:")} ${escapeText(f.hint)}`);
  return lines;
}

/** The failures past the first blocks, one line per step id and reason, in the order they first failed. */
function groupedFailureLines(rest: readonly StepFailure[], runDir: string, paint: Paint): string[] {
  const groups = new Map<string, { step: string; reason: string; list: StepFailure[] }>();
  for (const f of rest) {
    const reason = describeFailure(f);
    // JSON of the pair: no separator a step id could contain can make two groups one.
    const key = JSON.stringify([f.step, reason]);
    const group = groups.get(key);
    if (group) group.list.push(f);
    else groups.set(key, { step: f.step, reason, list: [f] });
  }
  const all = [...groups.values()];
  const lines = all.slice(0, FAILURE_GROUP_LINES).map(({ step, reason, list }) => {
    const what = list.length === 1 ? "1 more failure" : `${list.length} more failures`;
    return `${paint.red("✗")} ${what} of step ${paint.bold(displayCut(step))}: ${reason} (pipelines ${some(list.map((f) => f.pipeline))}; on ${some(list.map((f) => f.device))})`;
  });
  const untold = all.slice(FAILURE_GROUP_LINES).reduce((n, g) => n + g.list.length, 0);
  if (untold > 0) lines.push(`${paint.red("✗")} ${untold} more failures of other steps or reasons`);
  lines.push(
    `  ${paint.dim("every failure:")} ${escapeText(runDir)}/events.jsonl (gpu.step.end), logs under ${escapeText(runDir)}`,
  );
  return lines;
}

/** Up to three distinct names, escaped and cut, then an ellipsis. */
function some(names: readonly string[]): string {
  const distinct = [...new Set(names)];
  const shown = distinct
    .slice(0, 3)
    .map((n) => displayCut(n))
    .join(", ");
  return distinct.length > 3 ? `${shown}, …` : shown;
}

function overReservationLines(over: readonly OverReservation[], paint: Paint): string[] {
  if (over.length <= OVER_RESERVATION_LINES)
    return over.map((o) => {
      const attempt = o.attempt > 1 ? ` (attempt ${o.attempt})` : "";
      return `${paint.yellow("!")} ${paint.bold(stepName(o.pipeline, o.step))} on ${escapeText(o.device)}${attempt} used ${formatSize(o.peakVramBytes)} of VRAM, over its reservation of ${formatSize(o.reservationBytes)}`;
    });
  const byStep = new Map<string, OverReservation[]>();
  for (const o of over) {
    const list = byStep.get(o.step);
    if (list) list.push(o);
    else byStep.set(o.step, [o]);
  }
  return [...byStep].map(([step, list]) => {
    const peak = list.reduce((m, o) => Math.max(m, o.peakVramBytes), 0);
    const reserved = list.reduce((m, o) => Math.max(m, o.reservationBytes), 0);
    return `${paint.yellow("!")} step ${paint.bold(displayCut(step))}: ${list.length} ${list.length === 1 ? "attempt" : "attempts"} (pipelines ${some(list.map((o) => o.pipeline))}; on ${some(list.map((o) => o.device))}) used up to ${formatSize(peak)} of VRAM, over a reservation of at most ${formatSize(reserved)}`;
  });
}
