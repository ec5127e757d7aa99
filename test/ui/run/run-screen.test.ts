import { describe, expect, it } from "vitest";
import type { RunEvent } from "../../../src/run/record/events.js";
import { reduceRunState } from "../../../src/ui/run/reduce-run-state.js";
import { appendOutput, createRunState, type RunState } from "../../../src/ui/run/run-state.js";
import { renderRunScreen } from "../../../src/ui/run/tui/run-screen.js";
import { ALL_PIPELINES, busyEvents, ev, failureEvents, makePlan, plainText, T0 } from "./fixtures.js";

const WIDTH = 80;

function stateAfter(events: RunEvent[]): RunState {
  return events.reduce(reduceRunState, createRunState(makePlan(), ALL_PIPELINES));
}

function screen(state: RunState, atMs: number): string {
  return `\n${plainText(renderRunScreen(state, T0 + atMs, WIDTH))}\n`;
}

describe("the live view as text at 80 columns", () => {
  it("idle: every lane free, nothing done", () => {
    expect(screen(createRunState(makePlan(), ALL_PIPELINES), 0)).toMatchInlineSnapshot(`
      "
      gpuplan run
      [░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░] 0/8 steps
      ok 0 · failed 0 · skipped 0 · running 0 · waiting 0

      cuda:0  NVIDIA A100 80GB  0/2 slots · budget 72 GiB
        slot 0  free
        slot 1  free

      cuda:1  NVIDIA A100 80GB  0/2 slots · budget 72 GiB
        slot 0  free
        slot 1  free

      cpu
        idle
      "
    `);
  });

  it("busy: two pipelines on cuda:0, one waiting, an exclusive step on cuda:1, memory known", () => {
    let state = stateAfter(busyEvents());
    state = appendOutput(state, {
      pipeline: "plate-1",
      step: "segment",
      stream: "stdout",
      line: "tile 12/96",
    });
    state = appendOutput(state, {
      pipeline: "plate-2",
      step: "segment",
      stream: "stderr",
      line: "warning: a very long line that goes on and on past the edge of the terminal and must be cut off there",
    });
    expect(screen(state, 15_000)).toMatchInlineSnapshot(`
      "
      gpuplan run 20261122-010000-abcd  0:15
      [█████░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░░] 1/8 steps
      ok 1 · failed 0 · skipped 0 · running 3 · waiting 1

      cuda:0  NVIDIA A100 80GB  2/2 slots · mem 30 GiB / 80 GiB  1 waiting
        slot 0  plate-1 › segment  0:14
        slot 1  plate-2 › segment  0:14

      cuda:1  NVIDIA A100 80GB  2/2 slots · budget 72 GiB
        slot 0  train › fit  0:14  exclusive
        slot 1  held for train (exclusive)

      cpu
        idle

      [plate-1/segment] tile 12/96
      [plate-2/segment] warning: a very long line that goes on and on past the edge o…
      "
    `);
  });

  it("failure: an OOM listed, a retry running, a skipped step counted", () => {
    expect(screen(stateAfter(failureEvents()), 65_000)).toMatchInlineSnapshot(`
      "
      gpuplan run 20261122-010000-abcd  1:05
      [███████████████░░░░░░░░░░░░░░░░░░░░░░░░░] 3/8 steps
      ok 1 · failed 1 · skipped 1 · running 2 · waiting 0

      cuda:0  NVIDIA A100 80GB  2/2 slots · mem 30 GiB / 80 GiB
        slot 0  plate-3 · between steps
        slot 1  plate-2 › segment  0:43  attempt 2

      cuda:1  NVIDIA A100 80GB  2/2 slots · budget 72 GiB
        slot 0  train › fit  1:04  exclusive
        slot 1  held for train (exclusive)

      cpu
        idle

      Failed (1)
        ✗ plate-1/segment on cuda:0: oom (exit 1)
      "
    `);
  });

  it("never draws wider than the width it is given", () => {
    const text = plainText(renderRunScreen(stateAfter(failureEvents()), T0 + 65_000, 40));
    for (const line of text.split("\n")) expect(line.length).toBeLessThanOrEqual(40);
  });

  it("a warm worker shows in its GPU's lane with its idle time", () => {
    const worker = { model_key: "cellpose-cyto3", allocated_devices: ["cuda:0"] };
    const state = stateAfter([
      ev(0, "gpu.model.load_start", "plate-1", "segment", "cuda:0", { ...worker, ready_timeout_ms: 60_000 }),
      ev(1_000, "gpu.model.inference_start", "plate-1", "segment", "cuda:0", { ...worker, task: "t1" }),
      ev(2_000, "gpu.model.inference_end", "plate-1", "segment", "cuda:0", {
        ...worker,
        task: "t1",
        duration_ms: 1_000,
        status: "ok",
      }),
    ]);
    const text = screen(state, 14_000);
    expect(text).toMatch(/cuda:0[^\n]*\n(?:.*\n){2}\s+warm\s+cellpose-cyto3\s+idle 0:12/);
  });
});
