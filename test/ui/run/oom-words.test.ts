import { describe, expect, it } from "vitest";
import { describeEnding } from "../../../src/ui/run/format.js";

describe("an OOM's words say which memory ran out", () => {
  const oom = { status: "oom" as const, exitCode: 1, signal: null, durationMs: 1300 };

  it("on a GPU: GPU memory", () => {
    expect(describeEnding({ ...oom, device: "cuda:0" })).toBe(
      "failed: out of GPU memory (exit 1) after 1.3s",
    );
  });

  it("on the CPU (a CPU step, an on_oom fallback attempt): host memory, as the hint says", () => {
    // Before: "out of GPU memory" for an attempt that ran with no GPU at all.
    expect(describeEnding({ ...oom, device: "cpu" })).toBe("failed: out of host memory (exit 1) after 1.3s");
  });
});
