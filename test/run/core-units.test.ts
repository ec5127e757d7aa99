// Small core pieces: the journal (order, flush, torn last line), the semaphore, run ids, and
// failure classification beyond OOM.
import { appendFileSync, mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { Semaphore } from "../../src/run/executor/semaphore.js";
import { makeRunId, RUN_ID_PATTERN } from "../../src/run/prepare/run-id.js";
import { openJournal, readJournal, stepKey } from "../../src/run/record/journal.js";
import { classifyEnding, detectOom } from "../../src/run/step/classify-failure.js";

const step = (id: string, status: "ok" | "error" | "interrupted", pipeline = "p") => ({
  type: "step" as const,
  ts: "2026-11-22T00:00:00.000Z",
  pipeline,
  step: id,
  status,
  attempt: 1,
  device: "cpu",
  exitCode: status === "ok" ? 0 : 1,
  durationMs: 1,
});

describe("journal", () => {
  it("keeps entries in append order across concurrent appends; completed = last attempt ok; a torn last line is ignored", async () => {
    const dir = mkdtempSync(join(tmpdir(), "gpuplan-journal-"));
    try {
      const journal = await openJournal(dir);
      await Promise.all([
        journal.append({
          type: "run",
          run: "R",
          startedAt: "t",
          input: "p.yaml",
          baseDir: "/x",
          pipelines: ["p"],
        }),
        journal.append(step("a", "ok")),
        journal.append(step("b", "error")),
        journal.append(step("c", "ok")),
        journal.append(step("c", "interrupted")),
        journal.append(step("b", "ok")),
      ]);
      await journal.close();
      appendFileSync(join(dir, "journal.jsonl"), '{"type":"step","pipeline":"p","st');
      const state = await readJournal(dir);
      expect(state.header).toMatchObject({ run: "R", baseDir: "/x" });
      expect(state.entries.map((e) => (e.type === "step" ? `${e.step}:${e.status}` : e.type))).toEqual([
        "run",
        "a:ok",
        "b:error",
        "c:ok",
        "c:interrupted",
        "b:ok",
      ]);
      expect([...state.completed].sort()).toEqual([stepKey("p", "a"), stepKey("p", "b")]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe("semaphore and run ids", () => {
  it("the semaphore serves waiters first come, first served, and an aborted waiter leaves the queue", async () => {
    const sem = new Semaphore(1);
    const order: string[] = [];
    const first = await sem.acquire();
    const controller = new AbortController();
    const a = sem.acquire().then((release) => {
      order.push("a");
      release();
    });
    const b = sem.acquire(controller.signal).catch(() => order.push("b aborted"));
    const c = sem.acquire().then((release) => {
      order.push("c");
      release();
    });
    controller.abort(new Error("stop"));
    first();
    await Promise.all([a, b, c]);
    expect(order).toEqual(["b aborted", "a", "c"]);
  });

  it("run ids sort by time and are file-name safe", () => {
    const early = makeRunId(new Date("2026-11-22T01:15:00.123Z"));
    const late = makeRunId(new Date("2026-11-22T01:15:01.000Z"));
    expect(early).toMatch(/^20261122T011500Z-[0-9a-f]{6}$/);
    expect(RUN_ID_PATTERN.test(late)).toBe(true);
    expect(early < late).toBe(true);
  });

  it("run ids started in the same second still differ (a random suffix, from the kernel without node:crypto)", () => {
    const at = new Date("2026-11-22T01:15:00.000Z");
    const ids = new Set(Array.from({ length: 2000 }, () => makeRunId(at)));
    // 2,000 draws of 2²⁴: a collision or two at most by chance, never a constant suffix.
    expect(ids.size).toBeGreaterThanOrEqual(1990);
  });
});

describe("failure classification", () => {
  const ending = {
    exitCode: 1,
    signal: null,
    timedOut: false,
    interrupted: false,
    stderrTail: [] as string[],
  };
  it.each([
    [{ ...ending, exitCode: 0 }, "ok"],
    [{ ...ending, exitCode: 2, stderrTail: ["ValueError: bad"] }, "error"],
    [{ ...ending, exitCode: null, signal: "SIGKILL" as const }, "error"],
    [{ ...ending, timedOut: true, exitCode: null, signal: "SIGTERM" as const }, "timeout"],
    [{ ...ending, interrupted: true }, "interrupted"],
    [{ ...ending, exitCode: null, spawnError: "spawn nosuch ENOENT" }, "error"],
    // An OOM message in a step that still exits 0 is not a failure.
    [{ ...ending, exitCode: 0, stderrTail: ["CUDA out of memory"] }, "ok"],
  ])("%o → %s", (input, status) => {
    expect(classifyEnding(input).status).toBe(status);
  });

  it("hints say what to do", () => {
    expect(classifyEnding({ ...ending, exitCode: null, signal: "SIGKILL" }).hint).toMatch(/OOM killer/);
    expect(classifyEnding({ ...ending, exitCode: null, spawnError: "spawn nosuch ENOENT" }).hint).toMatch(
      /could not start the step: spawn nosuch ENOENT/,
    );
    expect(classifyEnding({ ...ending, stderrTail: ["RESOURCE_EXHAUSTED: Out of memory"] }).hint).toMatch(
      /on_oom/,
    );
  });

  it.each([
    ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "pytorch"],
    ["RuntimeError: CUDA error: CUBLAS_STATUS_ALLOC_FAILED", "pytorch"],
    // PyTorch 2.11 on an H100 (docs/real-gpu-check.md), and the RuntimeError of earlier releases.
    ["torch.AcceleratorError: CUDA error: out of memory", "pytorch"],
    ["RuntimeError: CUDA error: out of memory", "pytorch"],
    ["cupy_backends.cuda.api.runtime.CUDARuntimeError: cudaErrorMemoryAllocation: out of memory", "cupy"],
    [
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Out of memory while trying to allocate",
      "jax",
    ],
    ["2026-11-22 W external/xla/... Out of memory allocating 123 bytes", "jax"],
    ["ResourceExhaustedError: OOM when allocating tensor with shape[1024]", "tensorflow"],
    ["cupy.cuda.memory.OutOfMemoryError: Out of memory allocating 8,589,934,592 bytes", "cupy"],
    ["RuntimeError: HIP error: hipErrorOutOfMemory", "hip"],
    ["torch.OutOfMemoryError: HIP out of memory. Tried to allocate 2.00 GiB", "pytorch"],
    [
      "jaxlib.xla_extension.XlaRuntimeError: RESOURCE_EXHAUSTED: Failed to allocate request for 4.00GiB (4294967296B) on device ordinal 0",
      "jax",
    ],
    [
      "W external/tsl/tsl/framework/bfc_allocator.cc:485] Allocator (GPU_0_bfc) ran out of memory trying to allocate 16.00GiB (rounded to 17179869184)requested by op",
      "jax",
    ],
    ["MemoryError", null],
    // Host failures that say "out of memory" or RESOURCE_EXHAUSTED: not a GPU step's OOM.
    ["bash: fork: Out of memory", null],
    ["sh: 1: Cannot fork: Out of memory", null],
    [
      'grpc._channel._InactiveRpcError: status = StatusCode.RESOURCE_EXHAUSTED details = "Received message larger than max (8388608 vs. 4194304)"',
      null,
    ],
    ["XlaRuntimeError: RESOURCE_EXHAUSTED: Received message larger than max (8388608 vs. 4194304)", null],
    ['Exception in thread "main" java.lang.OutOfMemoryError: Java heap space', null],
  ])("%s → %s", (line, framework) => {
    expect(detectOom(["Traceback (most recent call last):", line])).toBe(framework);
  });
});
