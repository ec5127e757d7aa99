/** The final words of a run — the same text for the plain and the live view, on stderr. */

import type { OverReservation } from "../../schema-types/run-events.js";
import { escapeText } from "../../text/safe-text.js";
import { formatDuration } from "../../units/duration.js";
import { formatSize } from "../../units/size.js";
import { escapeOutputLine } from "../output-line.js";
import type { Paint } from "../paint.js";
import { describeFailure, stepName } from "./format.js";
import type { RunSummary } from "./view.js";

/** How many stderr lines of a failed step are shown; the log has the rest. */
const STDERR_TAIL_LINES = 10;
/**
 * Past this many, attempts over their reservation are told per step id, one line each: a warm
 * worker's model counts for every task it serves, so one low `vram` can mean thousands.
 */
const OVER_RESERVATION_LINES = 10;

/** Summary line, run dir, then one block per failure: where, why, its last stderr lines, log, hint. */
export function formatSummary(summary: RunSummary, paint: Paint): string {
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
  for (const f of summary.failures) {
    lines.push("");
    lines.push(
      `${paint.red("✗")} ${paint.bold(stepName(f.pipeline, f.step))} on ${escapeText(f.device)}: ${describeFailure(f)}`,
    );
    const tail = f.stderrTail.slice(-STDERR_TAIL_LINES);
    if (tail.length > 0) {
      lines.push(`  ${paint.dim("last stderr lines:")}`);
      for (const line of tail) lines.push(`    ${escapeOutputLine(line, paint.level > 0)}`);
    }
    // No log when the step never started (it timed out waiting for its GPU).
    if (f.logPath) lines.push(`  ${paint.dim(f.stderrPath ? "stdout:" : "log:")}  ${escapeText(f.logPath)}`);
    if (f.stderrPath) lines.push(`  ${paint.dim("stderr:")}  ${escapeText(f.stderrPath)}`);
    if (f.hint) lines.push(`  ${paint.dim("hint:")} ${escapeText(f.hint)}`);
  }
  // Over their reservation: not failures, but what the next plan's estimates should learn from.
  const over = summary.overReservations ?? [];
  if (over.length > 0) lines.push("");
  lines.push(...overReservationLines(over, paint));
  if (over.length > 0)
    lines.push(
      `  ${paint.dim("hint:")} raise \`vram\` to what the step uses and recompile, so that admission does not overcommit the GPU`,
    );
  if (summary.interrupted) {
    lines.push("");
    lines.push(`Resume with: gpuplan run --resume ${escapeText(summary.run)}`);
  }
  return `${lines.join("\n")}\n`;
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
    const pipelines = [...new Set(list.map((o) => o.pipeline))];
    const devices = [...new Set(list.map((o) => o.device))];
    const some = (names: string[]) =>
      names.length > 3
        ? `${names.slice(0, 3).map(escapeText).join(", ")}, …`
        : names.map(escapeText).join(", ");
    return `${paint.yellow("!")} step ${paint.bold(escapeText(step))}: ${list.length} ${list.length === 1 ? "attempt" : "attempts"} (pipelines ${some(pipelines)}; on ${some(devices)}) used up to ${formatSize(peak)} of VRAM, over a reservation of at most ${formatSize(reserved)}`;
  });
}
