/**
 * Top of the live view: run id and elapsed time, the progress bar, and the step counts. Built to
 * fit the width so that nothing in it is ever cut off: the run id gives way to the elapsed time,
 * the bar shrinks, and the counts wrap onto a second line on a narrow terminal.
 */

import { escapeText } from "../../../text/safe-text.js";
import { formatDuration } from "../../../units/duration.js";
import type { Paint } from "../../paint.js";
import { visibleWidth } from "../../table.js";
import { countSteps, type RunState } from "../run-state.js";
import { progressBar } from "./progress-bar.js";

const MAX_BAR = 40;
const MIN_BAR = 5;

export function headerLines(state: RunState, now: number, columns: number, paint: Paint): string[] {
  const counts = countSteps(state);
  const elapsed = state.startedMs === null ? "" : formatDuration(now - state.startedMs, "clock");
  const title = truncateEnd(
    `gpuplan run ${escapeText(state.run ?? "")}`.trimEnd(),
    elapsed ? columns - elapsed.length - 2 : columns,
  );
  const stepsText = `${counts.done}/${counts.total} steps`;
  const barWidth = Math.max(MIN_BAR, Math.min(MAX_BAR, columns - stepsText.length - 3));
  const bar = progressBar(counts.done, counts.total, barWidth);
  const parts = [
    paint.green(`ok ${counts.ok}`),
    counts.failed > 0 ? paint.red(`failed ${counts.failed}`) : `failed ${counts.failed}`,
    `skipped ${counts.skipped}`,
    `running ${counts.running}`,
    counts.waiting > 0 ? paint.yellow(`waiting ${counts.waiting}`) : `waiting ${counts.waiting}`,
  ];
  return [
    `${paint.bold(title)}${elapsed ? paint.dim(`  ${elapsed}`) : ""}`,
    `${counts.failed > 0 ? paint.red(bar) : paint.green(bar)} ${stepsText}`,
    ...joinWithin(parts, " · ", columns),
    ...slurmLines(state, columns, paint),
  ];
}

/** On Slurm: the pipelines' tasks by state, "Slurm tasks: pending 4 · running 4 · done 2". */
function slurmLines(state: RunState, columns: number, paint: Paint): string[] {
  const states = Object.values(state.slurm);
  if (states.length === 0) return [];
  const count = (test: (s: string) => boolean) => states.filter(test).length;
  const pending = count((s) => s === "PENDING");
  const running = count((s) => s === "RUNNING" || s === "COMPLETING");
  const done = count((s) => s === "COMPLETED");
  const failed = states.length - pending - running - done;
  const label = "Slurm tasks: ";
  const parts = [
    pending > 0 ? paint.yellow(`pending ${pending}`) : `pending ${pending}`,
    `running ${running}`,
    `done ${done}`,
    failed > 0 ? paint.red(`ended otherwise ${failed}`) : `ended otherwise ${failed}`,
  ];
  return joinWithin(parts, " · ", Math.max(1, columns - label.length)).map(
    (line, i) => `${i === 0 ? label : " ".repeat(label.length)}${line}`,
  );
}

/** `text` cut to `width` columns with an ellipsis (plain text: no colour inside). */
function truncateEnd(text: string, width: number): string {
  const chars = [...text];
  if (chars.length <= width) return text;
  return width <= 0 ? "" : `${chars.slice(0, width - 1).join("")}…`;
}

/** Parts joined by `separator` into as few lines of at most `width` columns as keep each part whole. */
function joinWithin(parts: readonly string[], separator: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  let used = 0;
  for (const part of parts) {
    const size = visibleWidth(part);
    if (line !== "" && used + separator.length + size > width) {
      lines.push(line);
      line = "";
      used = 0;
    }
    line += line === "" ? part : `${separator}${part}`;
    used += (used === 0 ? 0 : separator.length) + size;
  }
  if (line !== "") lines.push(line);
  return lines;
}
