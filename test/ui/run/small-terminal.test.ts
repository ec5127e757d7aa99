// The live view on a small terminal (60×20, 40×12): the header — progress bar, counts, elapsed —
// always shows, the screen never grows as tall as the terminal (ink would then clear the whole
// terminal on every frame), no line is wider than it, and lanes that do not fit collapse into
// "+N more". Rendered as text at a fixed size, colour stripped.
import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../src/run/record/events.js";
import type { GpuplanPlan } from "../../../src/schema-types/plan.js";
import { reduceRunState } from "../../../src/ui/run/reduce-run-state.js";
import { appendOutput, createRunState, type RunState } from "../../../src/ui/run/run-state.js";
import { renderRunScreen } from "../../../src/ui/run/tui/run-screen.js";
import { ALL_PIPELINES, busyEvents, failureEvents, makePlan, plainText, RUN, T0 } from "./fixtures.js";

/** The fixture plan with `extra` more two-slot GPUs (cuda:2 …), idle unless events say otherwise. */
function planWithGpus(extra: number): GpuplanPlan {
  const plan = makePlan();
  const template = plan.registry[0]!;
  for (let i = 0; i < extra; i++) {
    const gpu = `cuda:${i + 2}`;
    plan.registry.push({ ...template, gpu, uuid: `GPU-${gpu}` });
  }
  return plan;
}

function stateAfter(events: RunEvent[], plan: GpuplanPlan = makePlan()): RunState {
  return events.reduce(reduceRunState, createRunState(plan, ALL_PIPELINES));
}

function screen(state: RunState, atMs: number, columns: number, rows: number): string[] {
  return plainText(renderRunScreen(state, T0 + atMs, columns, { rows })).split("\n");
}

function withOutput(state: RunState, lines: number): RunState {
  let s = state;
  for (let i = 0; i < lines; i++)
    s = appendOutput(s, { pipeline: "plate-1", step: "segment", stream: "stdout", line: `tile ${i}/96` });
  return s;
}

/** Header present and whole: title with elapsed, the bar with the step count, every count. */
function expectHeader(lines: string[], elapsed: string, columns: number): void {
  expect(lines[0]).toMatch(new RegExp(`^gpuplan run .*  ${elapsed}$`));
  expect(lines[1]).toMatch(/^\[[█░]+\] \d+\/\d+ steps$/);
  const counts = lines.slice(2, 4).join(" · ");
  for (const word of ["ok", "failed", "skipped", "running", "waiting"])
    expect(counts).toMatch(new RegExp(`\\b${word} \\d+\\b`));
  for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(columns);
}

describe("the live view on a small terminal", () => {
  it.each([5, 3, 2])(
    "%d rows, shorter than the header: the frame stays under the terminal's height (ink cleared the scrollback)",
    (rows) => {
      const lines = screen(withOutput(stateAfter(failureEvents(), planWithGpus(14)), 5), 65_000, 40, rows);
      expect(lines.length).toBeLessThanOrEqual(rows - 1);
      expect(lines[0]).toMatch(/^gpuplan run /);
    },
  );

  it("60×20 with sixteen GPUs: header whole, busy lanes and failures first, the rest as +N more", () => {
    const lines = screen(withOutput(stateAfter(failureEvents(), planWithGpus(14)), 5), 65_000, 60, 20);
    expect(lines.length).toBeLessThanOrEqual(19);
    expectHeader(lines, "1:05", 60);
    expect(lines.filter((l) => /^\+\d+ more: cuda:\d+, /.test(l))).toHaveLength(1);
    expect(lines).toMatchInlineSnapshot(`
      [
        "gpuplan run 20261122-010000-abcd  1:05",
        "[███████████████░░░░░░░░░░░░░░░░░░░░░░░░░] 3/8 steps",
        "ok 1 · failed 1 · skipped 1 · running 2 · waiting 0",
        "cuda:0  NVIDIA A100 80GB  2/2 slots · mem 30 GiB / 80 GiB",
        "  slot 0  plate-3 · between steps",
        "  slot 1  plate-2 › segment  0:43  attempt 2",
        "cuda:1  NVIDIA A100 80GB  2/2 slots · budget 72 GiB",
        "  slot 0  train › fit  1:04  exclusive",
        "  slot 1  held for train (exclusive)",
        "cuda:2  NVIDIA A100 80GB  0/2 slots · budget 72 GiB",
        "cuda:3  NVIDIA A100 80GB  0/2 slots · budget 72 GiB",
        "cuda:4  NVIDIA A100 80GB  0/2 slots · budget 72 GiB",
        "cuda:5  NVIDIA A100 80GB  0/2 slots · budget 72 GiB",
        "cuda:6  NVIDIA A100 80GB  0/2 slots · budget 72 GiB",
        "cuda:7  NVIDIA A100 80GB  0/2 slots · budget 72 GiB",
        "cuda:8  NVIDIA A100 80GB  0/2 slots · budget 72 GiB",
        "+8 more: cuda:9, cuda:10, cuda:11, cuda:12, cuda:13, cuda:1…",
        "Failed (1)",
        "  ✗ plate-1/segment on cuda:0: oom (exit 1)",
      ]
    `);
  });

  it("40×12: the header keeps its counts (wrapped) and elapsed; lanes that do not fit collapse", () => {
    const lines = screen(withOutput(stateAfter(busyEvents(), planWithGpus(6)), 5), 15_000, 40, 12);
    expect(lines.length).toBeLessThanOrEqual(11);
    expectHeader(lines, "0:15", 40);
    expect(lines.at(-1)).toMatch(/^\+\d+ more: cuda:\d+, /);
    expect(lines).toMatchInlineSnapshot(`
      [
        "gpuplan run 20261122-010000-abcd  0:15",
        "[███░░░░░░░░░░░░░░░░░░░░░░░░░] 1/8 steps",
        "ok 1 · failed 0 · skipped 0 · running 3",
        "waiting 1",
        "cuda:0  NVIDIA A100 80GB  2/2 slots · m…",
        "  slot 0  plate-1 › segment  0:14",
        "  slot 1  plate-2 › segment  0:14",
        "cuda:1  NVIDIA A100 80GB  2/2 slots · b…",
        "  slot 0  train › fit  0:14  exclusive",
        "  slot 1  held for train (exclusive)",
        "+7 more: cuda:2, cuda:3, cuda:4, cuda:5…",
      ]
    `);
  });

  it("40×12 with a long run id: the id gives way, the elapsed time stays", () => {
    const long = busyEvents().map((e) => ({ ...e, run: `${RUN}-with-a-very-long-suffix-nobody-reads` }));
    const lines = screen(stateAfter(long), 75_000, 40, 12);
    expect(lines[0]).toBe("gpuplan run 20261122-010000-abcd-…  1:15");
  });

  it("a lane taller than the terminal shows its first rows and how many more", () => {
    const plan = makePlan();
    plan.registry[0] = { ...plan.registry[0]!, maxPipelines: 12 };
    const lines = screen(stateAfter(busyEvents(), plan), 15_000, 60, 12);
    expect(lines.length).toBeLessThanOrEqual(11);
    expectHeader(lines, "0:15", 60);
    expect(lines).toMatchInlineSnapshot(`
      [
        "gpuplan run 20261122-010000-abcd  0:15",
        "[█████░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░] 1/8 steps",
        "ok 1 · failed 0 · skipped 0 · running 3 · waiting 1",
        "cuda:0  NVIDIA A100 80GB  2/12 slots · mem 30 GiB / 80 GiB …",
        "  slot 0  plate-1 › segment  0:14",
        "  slot 1  plate-2 › segment  0:14",
        "  slot 2  free",
        "  slot 3  free",
        "  slot 4  free",
        "  +7 more",
        "+2 more: cuda:1, cpu",
      ]
    `);
  });

  it("without a height (a test, a non-live consumer) every lane shows", () => {
    const text = plainText(renderRunScreen(stateAfter(busyEvents(), planWithGpus(6)), T0 + 15_000, 60));
    for (let i = 0; i < 8; i++) expect(text).toContain(`cuda:${i}  NVIDIA`);
    expect(text).not.toContain("more");
  });
});
