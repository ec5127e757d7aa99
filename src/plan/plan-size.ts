/**
 * How big a plan gpuplan writes and reads: one limit that compile and run share, so compile never
 * writes a plan that run refuses (docs/decisions/0019-a-limit-on-plan-size.md). Run holds the
 * whole plan, filled with its defaults, and a dry run its description too: on a plan of 143 MiB
 * (500,000 short steps) `run --dry-run` peaked at 3.4 GiB, and past V8's heap limit (~4 GiB on a
 * machine of 16 GiB or more, a quarter of the memory below that) Node dies with a fatal error
 * instead of an answer. Both halves are checked before the text is parsed.
 */

import { UsageError } from "../problems/errors.js";
import { error, type Problem } from "../problems/problem.js";
import type { SizeLimit } from "../source/read-source-text.js";

/** The largest plan file compile writes and run reads: 128 MiB (~400,000 short steps). */
export const MAX_PLAN_BYTES = 128 * 2 ** 20;

/** The heap a plan takes to read and dry-run, per byte of its file (measured: ×24 on dense plans). */
const HEAP_BYTES_PER_PLAN_BYTE = 24;

const MIB = 2 ** 20;
const mib = (bytes: number): string => `${Math.ceil(bytes / MIB)} MiB`;

/** What compile says of a plan past MAX_PLAN_BYTES, located at the pipeline file's pipelines. */
export function planTooLargeProblem(pipelineFile: string, bytes: number): Problem {
  return error({
    code: "plan-too-large",
    message: `the plan would be ${bytes > MAX_PLAN_BYTES ? `more than ${mib(MAX_PLAN_BYTES)}` : mib(bytes)}, more than gpuplan run reads (${mib(MAX_PLAN_BYTES)})`,
    hint: "split the pipelines over several pipeline files (or matrices over fewer values) and compile a plan of each",
    file: pipelineFile,
    pointer: "/pipelines",
  });
}

/**
 * The most bytes of a plan this process can read: MAX_PLAN_BYTES, or less where V8's heap limit
 * (a quarter of a small machine's memory, or NODE_OPTIONS=--max-old-space-size) would not hold it.
 */
export function planReadLimit(heapLimit = heapSizeLimit()): number {
  return Math.min(MAX_PLAN_BYTES, Math.floor(heapLimit / HEAP_BYTES_PER_PLAN_BYTE));
}

const heapSizeLimit = (): number => process.getBuiltinModule("node:v8").getHeapStatistics().heap_size_limit;

/** The refusal of a plan file of `bytes` (more than planReadLimit), said before it is parsed. */
function planTooLargeToRead(file: string, bytes: number | undefined, heapLimit = heapSizeLimit()): Problem {
  const size = bytes === undefined ? `more than ${mib(planReadLimit(heapLimit))}` : mib(bytes);
  if (bytes !== undefined && bytes > MAX_PLAN_BYTES)
    return error({
      code: "plan-too-large",
      message: `${file} is ${size}, more than gpuplan reads of a plan (${mib(MAX_PLAN_BYTES)})`,
      hint: "compile plans of at most that size: split the pipelines over several pipeline files and compile a plan of each",
      file,
    });
  const needed = Math.ceil(((bytes ?? MAX_PLAN_BYTES) * HEAP_BYTES_PER_PLAN_BYTE) / MIB);
  return error({
    code: "plan-too-large",
    message: `${file} is ${size}, and reading it takes about ${needed} MiB of memory, more than Node's heap limit here (${mib(heapLimit)})`,
    hint: `give Node a larger heap (NODE_OPTIONS=--max-old-space-size=${needed}), or compile smaller plans`,
    file,
  });
}

/**
 * Below this a plan fits any heap Node gives (a 512 MiB machine's is 128 MiB): node:v8, which
 * loads Node's streams (~1 ms of a small dry run's start), is asked only about larger files.
 */
const SMALL_PLAN_BYTES = 4 * MIB;

/** The size limit for reading the plan file `file` (src/source/read-source-text.ts). */
export function planSizeLimit(file: string): SizeLimit {
  let heapLimit: number | undefined;
  const heap = () => (heapLimit ??= heapSizeLimit());
  return {
    bytesFor: (expected) => (expected <= SMALL_PLAN_BYTES ? MAX_PLAN_BYTES : planReadLimit(heap())),
    tooLarge: (size) => new PlanTooLarge(size ?? 0, planTooLargeToRead(file, size, heap())),
  };
}

/**
 * Thrown by withinPlanLimit once a plan's text passes MAX_PLAN_BYTES (compile makes it a located
 * problem), and by planSizeLimit's reader (run and report show its problem). A UsageError, so the
 * writer and the reader pass it on as it is rather than as a failed write or read.
 */
export class PlanTooLarge extends UsageError {
  override name = "PlanTooLarge";
  constructor(
    readonly bytes: number,
    /** The refusal of a plan to read, which run and report show as the plan's problem. */
    readonly problem?: Problem,
  ) {
    super(
      problem?.message ?? `the plan is more than ${mib(MAX_PLAN_BYTES)}`,
      "plan-too-large",
      problem?.hint,
    );
  }
}

/**
 * The plan's pieces as they go out, counted: the piece that passes MAX_PLAN_BYTES throws instead
 * (the atomic writer then removes its temporary file), so a plan is serialised once, not once to
 * measure and once to write.
 */
export function* withinPlanLimit(pieces: Iterable<string>): Generator<string> {
  let bytes = 0;
  for (const piece of pieces) {
    bytes += Buffer.byteLength(piece);
    if (bytes > MAX_PLAN_BYTES) throw new PlanTooLarge(bytes);
    yield piece;
  }
}

/**
 * The plan's size in bytes, counted only up to the first piece past MAX_PLAN_BYTES, and its pieces
 * themselves while they come to at most `keepBytes`: a plan for stdout is measured before any of
 * it goes out, and a small one (nearly all) is then written from these instead of serialised again.
 */
export function planBytesUpToLimit(
  pieces: Iterable<string>,
  keepBytes = 0,
): { bytes: number; pieces: string[] | undefined } {
  let bytes = 0;
  let kept: string[] | undefined = [];
  for (const piece of pieces) {
    bytes += Buffer.byteLength(piece);
    if (bytes > MAX_PLAN_BYTES) break;
    if (kept !== undefined) {
      if (bytes <= keepBytes) kept.push(piece);
      else kept = undefined;
    }
  }
  return { bytes, pieces: kept };
}
