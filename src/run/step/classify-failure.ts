/**
 * What went wrong with a step, from how it ended and the last lines it wrote to stderr. OOM is
 * recognised per framework by the messages each one prints when an allocation fails; a step
 * that prints one of them and exits non-zero ran out of (GPU) memory, whatever its exit code.
 */
import type { OomFramework } from "../../schema-types/run-events.js";
import type { StepStatus } from "../record/events.js";

/** The frameworks whose out-of-memory message is recognised (the events' `framework`). */
export type Framework = OomFramework;

/** Checked in order: the first match names the framework. */
const OOM_PATTERNS: readonly { framework: Framework; pattern: RegExp }[] = [
  {
    framework: "pytorch",
    // "CUDA error: out of memory": an allocation inside CUDA itself (a kernel launch, a context)
    // rather than PyTorch's allocator, raised as torch.AcceleratorError (≥ 2.8) or RuntimeError;
    // seen on an H100 when a neighbour's failed allocation briefly held the memory.
    // "HIP out of memory": the same allocator on a ROCm build.
    pattern:
      /(CUDA|HIP) out of memory|CUDA error: out of memory|torch\.(cuda\.)?OutOfMemoryError|CUBLAS_STATUS_ALLOC_FAILED/,
  },
  { framework: "tensorflow", pattern: /OOM when allocating/ },
  // Before JAX: CuPy's message ("OutOfMemoryError: Out of memory allocating …") contains XLA's phrase.
  { framework: "cupy", pattern: /cupy[\w.]*OutOfMemoryError|CUDARuntimeError: cudaErrorMemoryAllocation/ },
  { framework: "hip", pattern: /hipErrorOutOfMemory/ },
  // XLA's allocation failures only: a bare "Out of memory" is also the shell's (`bash: fork: Out
  // of memory`) and RESOURCE_EXHAUSTED also gRPC's (a message over its size limit) — host
  // failures, for which a GPU step's on_oom ladder would only retry in vain.
  {
    framework: "jax",
    pattern:
      /RESOURCE_EXHAUSTED: (Out of memory|Failed to allocate)|Out of memory (while trying to allocate|allocating) [\d,]+ ?bytes|Allocator \(\w+\) ran out of memory trying to allocate/,
  },
];

export interface StepEnding {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  timedOut: boolean;
  interrupted: boolean;
  stderrTail: readonly string[];
  /** The step failed to start (ENOENT, EACCES): its message. */
  spawnError?: string;
}

export interface Classification {
  status: StepStatus;
  framework: Framework | null;
  hint: string | null;
}

/** ok | error | oom | timeout | interrupted, with a hint for a person. */
export function classifyEnding(
  ending: StepEnding,
  timeoutMs: number | null = null,
  device = "gpu",
): Classification {
  if (ending.interrupted)
    return { status: "interrupted", framework: null, hint: "resume with gpuplan run --resume" };
  if (ending.timedOut) {
    return {
      status: "timeout",
      framework: null,
      hint: `the step ran past its timeout${timeoutMs !== null ? ` (${timeoutMs} ms)` : ""}; raise \`timeout\` or make it faster`,
    };
  }
  if (ending.spawnError !== undefined) {
    return { status: "error", framework: null, hint: `could not start the step: ${ending.spawnError}` };
  }
  if (ending.exitCode === 0 && ending.signal === null) return { status: "ok", framework: null, hint: null };
  const framework = detectOom(ending.stderrTail);
  if (framework) {
    const hint =
      device === "cpu"
        ? `${framework} ran out of memory on the CPU (host memory); lower the step's batch size or free host memory`
        : `${framework} ran out of GPU memory; lower the step's batch size, raise \`vram\` and recompile, or add on_oom: { retries: 1, fallback: cpu }`;
    return { status: "oom", framework, hint };
  }
  if (ending.signal === "SIGKILL") {
    return {
      status: "error",
      framework: null,
      hint: "killed by SIGKILL: the kernel's OOM killer (host memory) or another process",
    };
  }
  return { status: "error", framework: null, hint: "see the last lines of stderr above and the step's log" };
}

/** The last lines of stderr where any out-of-memory message counts. */
const RECENT_LINES = 40;
const TRACEBACK = /^Traceback \(most recent call last\):/;
/** What Python prints between a chained exception's cause and the exception it led to. */
const CHAINED =
  /^(The above exception was the direct cause of the following exception:|During handling of the above exception, another exception occurred:)$/;

/**
 * The framework whose out-of-memory message appears in these stderr lines (the end of stderr), if
 * any: in the last 40 lines, or anywhere in the Python exception the step ended with, its chained
 * causes included. A trainer that wraps the allocator's error (Lightning, accelerate, a user's
 * `raise … from e`) prints the OOM first and then 40 lines and more of the exception it led to:
 * the step read as a plain error, and its on_oom ladder never ran. An OOM caught earlier, before
 * the step failed of something else, is in neither.
 */
export function detectOom(lines: readonly string[]): Framework | null {
  return matchOom(lines.slice(-RECENT_LINES)) ?? matchOom(finalException(lines));
}

function matchOom(lines: readonly string[]): Framework | null {
  const text = lines.join("\n");
  for (const { framework, pattern } of OOM_PATTERNS) if (pattern.test(text)) return framework;
  return null;
}

/** The last `Traceback` of `lines` to the end, reaching back through the causes chained to it. */
function finalException(lines: readonly string[]): readonly string[] {
  let start = lastTraceback(lines, lines.length - 1);
  while (start > 0) {
    // "…cause's last line", "", "The above exception was the direct cause…", "", "Traceback …"
    const link = lines.slice(Math.max(0, start - 3), start).some((line) => CHAINED.test(line.trim()));
    const cause = link ? lastTraceback(lines, start - 1) : -1;
    if (cause === -1) break;
    start = cause;
  }
  return start === -1 ? [] : lines.slice(start);
}

function lastTraceback(lines: readonly string[], from: number): number {
  for (let i = from; i >= 0; i--) if (TRACEBACK.test(lines[i]!)) return i;
  return -1;
}
