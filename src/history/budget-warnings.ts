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

/** Where the pipelines went: each GPU, each pipeline's GPUs (none: the CPU, or unplaced), the estimated makespan. */
export interface Placement {
  makespanMs: number;
  gpusOf: ReadonlyMap<string, readonly string[]>;
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
  const where = (gpus: readonly string[] | undefined) => (gpus?.length ? gpus.join("+") : "the CPU");
  let more = 0;
  for (const [name, gpus] of after.gpusOf) {
    if (templateOf.get(name) !== template) continue;
    const was = before.gpusOf.get(name);
    if (where(was) === where(gpus)) continue;
    if (out.length < MAX_MOVES_SAID) out.push(`\`${name}\` moves from ${where(was)} to ${where(gpus)}`);
    else more++;
  }
  if (more > 0) out.push(`${more} more of its pipelines move`);
  return out;
}

/** A size as a pipeline file can say it, never below `bytes`: GiB with one decimal, rounded up. */
function typedSize(bytes: number): string {
  const MiB = 1024 ** 2;
  if (bytes < 1024 * MiB) return `${Math.ceil(bytes / MiB)}MiB`;
  return `${Math.ceil((bytes / 1024 ** 3) * 10) / 10}GiB`;
}
