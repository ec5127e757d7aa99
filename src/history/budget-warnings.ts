/**
 * A step that held more VRAM than its budget in an earlier run is warned about at the step, with
 * what the learned value changes: compile places the pipelines twice, once with the file's values
 * and once with the learned ones, and the warning says which pipeline's GPU and the estimated
 * makespan differ — so "this needs 30 GiB" reads as "and so the plan takes 40m, not 20m" (a GPU's
 * slots stay: memory is a budget beside them, decision 0012).
 */
import type { Problem } from "../problems/problem.js";
import { warning } from "../problems/problem.js";
import { formatDuration } from "../units/duration.js";
import { formatSize } from "../units/size.js";
import { learnedVramBytes, type OverBudget, VRAM_HEADROOM } from "./learn-estimates.js";

/** Where the pipelines went: each pipeline's GPUs (none: the CPU, or unplaced), the estimated makespan. */
export interface Placement {
  makespanMs: number;
  gpusOf: ReadonlyMap<string, readonly string[]>;
  /** Pipelines with GPU steps no GPU can take and no CPU fallback: compile fails with no-usable-gpu. */
  unplaced: ReadonlySet<string>;
}

/** A matrix of 1,000 plates moving is said as three and a count. */
const MAX_MOVES_SAID = 3;

export function overBudgetWarnings(
  over: readonly OverBudget[],
  before: Placement,
  after: Placement,
  templateOf: ReadonlyMap<string, string>,
  file: string,
): Problem[] {
  return over.map((o) => {
    const changes = [...moves(o.template, before, after, templateOf), ...makespanChange(before, after)];
    return warning({
      code: "history-vram-over-budget",
      message:
        `step \`${o.step.id}\` of \`${o.template}\` held ${formatSize(o.peakBytes)} of VRAM at its peak ` +
        `(${o.samples} attempt(s) in ${o.runs} run(s)), over its budget of ${formatSize(o.budgetBytes)}; ` +
        `with what was measured ${changes.length ? changes.join("; ") : "the GPUs and the estimated makespan stay the same"}`,
      hint: `set \`vram: ${typedSize(learnedVramBytes(o.peakBytes))}\` (the peak and ${VRAM_HEADROOM * 100}% headroom), or keep compiling with --history`,
      file,
      pointer: o.step.pointer,
    });
  });
}

function makespanChange(before: Placement, after: Placement): string[] {
  if (before.makespanMs === after.makespanMs) return [];
  return [
    `the estimated makespan is ${formatDuration(after.makespanMs)} instead of ${formatDuration(before.makespanMs)}`,
  ];
}

function moves(
  template: string,
  before: Placement,
  after: Placement,
  templateOf: ReadonlyMap<string, string>,
): string[] {
  const out: string[] = [];
  // No GPUs is the CPU only for a pipeline that falls back to it; else it is not placed at all.
  const where = (p: Placement, name: string) => {
    const gpus = p.gpusOf.get(name);
    if (gpus?.length) return gpus.join("+");
    return p.unplaced.has(name) ? "no GPU" : "the CPU";
  };
  let more = 0;
  let moreStranded = 0;
  for (const name of after.gpusOf.keys()) {
    if (templateOf.get(name) !== template) continue;
    const was = where(before, name);
    const now = where(after, name);
    if (was === now) continue;
    if (out.length >= MAX_MOVES_SAID) {
      more++;
      if (after.unplaced.has(name)) moreStranded++;
    } else if (after.unplaced.has(name))
      out.push(
        `no GPU can take \`${name}\` (with the file's values: ${was}), so compile fails (no-usable-gpu)`,
      );
    else out.push(`\`${name}\` moves from ${was} to ${now}`);
  }
  if (more > 0)
    out.push(
      `${more} more of its pipelines move${moreStranded ? ` (${moreStranded} of them: no GPU can take them)` : ""}`,
    );
  return out;
}

/** A size as a pipeline file can say it, never below `bytes`: GiB with one decimal, rounded up. */
function typedSize(bytes: number): string {
  const MiB = 1024 ** 2;
  if (bytes < 1024 * MiB) return `${Math.ceil(bytes / MiB)}MiB`;
  return `${Math.ceil((bytes / 1024 ** 3) * 10) / 10}GiB`;
}
