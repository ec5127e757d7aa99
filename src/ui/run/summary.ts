/** The final words of a run — the same text for the plain and the live view, on stderr. */

import { escapeText } from "../../text/safe-text.js";
import { formatDuration } from "../../units/duration.js";
import { formatSize } from "../../units/size.js";
import { escapeOutputLine } from "../output-line.js";
import type { Paint } from "../paint.js";
import { describeFailure, stepName } from "./format.js";
import type { RunSummary } from "./view.js";

/** How many stderr lines of a failed step are shown; the log has the rest. */
const STDERR_TAIL_LINES = 10;

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
  for (const o of over) {
    const attempt = o.attempt > 1 ? ` (attempt ${o.attempt})` : "";
    lines.push(
      `${paint.yellow("!")} ${paint.bold(stepName(o.pipeline, o.step))} on ${escapeText(o.device)}${attempt} used ${formatSize(o.peakVramBytes)} of VRAM, over its reservation of ${formatSize(o.reservationBytes)}`,
    );
  }
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
