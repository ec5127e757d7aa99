/**
 * Replaces the estimates a pipeline file typed by what earlier runs measured (compile --history):
 * a step's estimate becomes the median duration of its ok attempts (the median, so one slow
 * outlier does not move it), its VRAM the highest peak its attempts held plus VRAM_HEADROOM,
 * rounded up to a MiB (the highest, because a budget under any real peak is an OOM waiting). Each
 * learned value records where it came from beside the file's value. Pure: the registry and the
 * assignment then see learned values as if typed.
 */
import type { ResolvedPipeline, ResolvedStep } from "../pipeline/model.js";
import { type Problem, warning } from "../problems/problem.js";
import type { LearnedValues } from "../schema-types/plan.js";
import { formatDuration, MAX_FILE_DURATION_MS } from "../units/duration.js";
import type { History, StepSamples } from "./read-history.js";
import { stepKey } from "./step-key.js";

/** The share added to a measured VRAM peak: allocators round up and inputs vary between runs. */
export const VRAM_HEADROOM = 0.1;
const MiB = 1024 ** 2;
/** How far off a file's estimate may be before compile says so. */
const ESTIMATE_OFF_RATIO = 2;

/** A step that held more VRAM than its budget in an earlier run. */
export interface OverBudget {
  template: string;
  step: ResolvedStep;
  peakBytes: number;
  budgetBytes: number;
  samples: number;
  runs: number;
}

export interface LearnedPipelines {
  pipelines: ResolvedPipeline[];
  /** Steps (one per template and id) whose estimate was replaced. */
  learnedSteps: number;
  overBudget: OverBudget[];
  problems: Problem[];
}

export function learnedVramBytes(peakBytes: number): number {
  return Math.ceil((peakBytes * (1 + VRAM_HEADROOM)) / MiB) * MiB;
}

export function median(values: readonly number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = sorted.length >> 1;
  return sorted.length % 2 === 1 ? sorted[mid]! : Math.round((sorted[mid - 1]! + sorted[mid]!) / 2);
}

const sortedRuns = (runs: Set<string>): [string, ...string[]] => [...runs].sort() as [string, ...string[]];

/** What a step's samples come to, the same for every expansion of its template. */
interface Measured {
  samples: StepSamples;
  /** The median duration (null: no ok attempt). */
  medianMs: number | null;
  /** The highest peak (null: none). */
  peakBytes: number | null;
  durationRuns: [string, ...string[]] | null;
  peakRuns: [string, ...string[]] | null;
}

function measure(samples: StepSamples): Measured {
  return {
    samples,
    medianMs: samples.durationsMs.length > 0 ? median(samples.durationsMs) : null,
    // A loop, not Math.max(...peaks): past ~125,000 samples (5 runs of a 384-well × 96-plate
    // matrix) spreading them as arguments overflowed the stack, and compile was an internal error.
    peakBytes: samples.peaksBytes.length > 0 ? samples.peaksBytes.reduce((a, b) => (b > a ? b : a), 0) : null,
    durationRuns: samples.durationsMs.length > 0 ? sortedRuns(samples.durationRuns) : null,
    peakRuns: samples.peaksBytes.length > 0 ? sortedRuns(samples.peakRuns) : null,
  };
}

export function learnEstimates(
  pipelines: readonly ResolvedPipeline[],
  history: History,
  file: string,
): LearnedPipelines {
  const result: LearnedPipelines = { pipelines: [], learnedSteps: 0, overBudget: [], problems: [] };
  // Once per template and step, not per expansion: sorting every sample for each of 20,000
  // expansions made compile --history of a 20,000-plate matrix take two minutes, not two seconds.
  const measured = new Map<string, Measured>();
  for (const p of pipelines) {
    const steps = p.steps.map((s) => {
      const key = stepKey(p.template, s.id);
      let m = measured.get(key);
      // A template's expansions share their steps' pointers: each step is said once, at its first.
      const first = m === undefined;
      if (m === undefined) {
        const samples = history.steps.get(key);
        if (!samples) return s;
        m = measure(samples);
        measured.set(key, m);
      }
      const learned = learnStep(p, s, m, file, first ? result : undefined);
      if (learned !== s && first) result.learnedSteps++;
      return learned;
    });
    result.pipelines.push({ ...p, steps });
  }
  return result;
}

function learnStep(
  p: ResolvedPipeline,
  s: ResolvedStep,
  m: Measured,
  file: string,
  report: LearnedPipelines | undefined,
): ResolvedStep {
  const { samples, medianMs, peakBytes } = m;
  const learned: LearnedValues = {};
  let { estimateMs, vramBytes } = s;
  if (medianMs !== null && m.durationRuns !== null) {
    estimateMs = medianMs;
    learned.estimateMs = {
      fromFile: s.estimateMs,
      samples: samples.durationsMs.length,
      runs: m.durationRuns,
    };
    if (report) checkEstimate(p, s, estimateMs, samples, file, report);
  }
  if (s.isGpu && peakBytes !== null && m.peakRuns !== null) {
    vramBytes = learnedVramBytes(peakBytes);
    learned.vramBytes = {
      fromFile: s.vramBytes,
      peakBytes,
      headroom: VRAM_HEADROOM,
      samples: samples.peaksBytes.length,
      runs: m.peakRuns,
    };
    const budgetBytes = s.vramBytes ?? samples.budgetBytes;
    if (report && budgetBytes !== null && peakBytes > budgetBytes) {
      report.overBudget.push({
        template: p.template,
        step: s,
        peakBytes,
        budgetBytes,
        samples: samples.peaksBytes.length,
        runs: samples.peakRuns.size,
      });
    }
  }
  if (!learned.estimateMs && !learned.vramBytes) return s;
  return { ...s, estimateMs, vramBytes, learned };
}

function checkEstimate(
  p: ResolvedPipeline,
  s: ResolvedStep,
  measuredMs: number,
  samples: StepSamples,
  file: string,
  report: LearnedPipelines,
): void {
  if (s.estimateFrom === null) return;
  const typed = s.estimateMs;
  const ratio = Math.max(measuredMs, 1) / Math.max(typed, 1);
  if (ratio <= ESTIMATE_OFF_RATIO && ratio >= 1 / ESTIMATE_OFF_RATIO) return;
  const factor = ratio >= 1 ? ratio : 1 / ratio;
  const where = s.estimateFrom === "defaults" ? "`defaults.estimate`" : "the file";
  report.problems.push(
    warning({
      code: "history-estimate-off",
      message:
        `step \`${s.id}\` of \`${p.template}\` took ${formatDuration(measuredMs)} ` +
        `(median of ${samples.durationsMs.length} ok attempt(s) in ${samples.durationRuns.size} run(s)); ` +
        `${where} says ${formatDuration(typed)}: ${ratio >= 1 ? "under" : "over"}estimated ${factor.toFixed(1)}×`,
      hint: `set \`estimate: ${typedDuration(measuredMs)}\`, or keep compiling with --history`,
      file,
      pointer: s.estimateFrom === "step" ? `${s.pointer}/estimate` : s.pointer,
    }),
  );
}

/**
 * A duration as a pipeline file can say it (formatDuration's 4m05s is for reading, not for YAML):
 * under a minute as formatDuration says it, else whole seconds in the largest unit that says them
 * exactly (25h, 90m, 3d), its digits written out — `${n}s` printed 1e+297s, which no file takes.
 */
const typedDuration = (ms: number): string => {
  if (ms < 60_000) return formatDuration(ms);
  const seconds = Math.round(Math.min(ms, MAX_FILE_DURATION_MS) / 1000);
  const [unit, size] = (
    [
      ["d", 86_400],
      ["h", 3600],
      ["m", 60],
    ] as const
  ).find(([, n]) => seconds % n === 0) ?? ["s", 1];
  return `${seconds / size}${unit}`;
};
