import { describe, expect, it, vi } from "vitest";
import { createView } from "../../../src/ui/run/index.js";
import {
  ALL_PIPELINES,
  busyEvents,
  captureStream,
  failedSummary,
  makePlan,
  plainText,
  RUN,
  T0,
} from "./fixtures.js";

describe("the live view through createView", () => {
  it("draws on stderr, leaves stdout alone, and ends with the plain summary", async () => {
    const out = captureStream(80);
    const err = captureStream(80);
    const view = await createView("tui", {
      plan: makePlan(),
      pipelines: ALL_PIPELINES,
      out,
      err,
      colorLevel: 0,
      columns: 80,
    });
    for (const event of busyEvents()) view.onEvent(event);
    view.onOutput("plate-1", "segment", "stdout", "tile 12/96");
    await view.close(failedSummary());
    await view.close(failedSummary());

    expect(out.text()).toBe("");
    const text = plainText(err.text());
    expect(text).toContain("plate-1 › segment");
    expect(text).toContain("[plate-1/segment] tile 12/96");
    const summaryAt = text.indexOf(`run ${RUN} failed: 5 ok, 1 failed, 1 skipped`);
    expect(summaryAt).toBeGreaterThan(text.lastIndexOf("cuda:1"));
    expect(
      text.endsWith(
        "hint: lower the step's batch size, or give it more memory (vram:) so fewer pipelines share cuda:0\n",
      ),
    ).toBe(true);
    expect(text.split(`run ${RUN} failed`)).toHaveLength(2);
  });
});

describe("the live view on a terminal that reports no size (a forced --ui tui)", () => {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: ink's frame updates are CSI sequences
  const CSI = /\u001b\[[0-9;?]*[A-Za-z]/g;

  /** The fixture plan with twelve more GPUs: drawn whole, far taller than 24 rows. */
  function tallPlan() {
    const plan = makePlan();
    const template = plan.registry[0]!;
    for (let i = 2; i < 14; i++) plan.registry.push({ ...template, gpu: `cuda:${i}`, uuid: `GPU-cuda:${i}` });
    return plan;
  }

  it.each([
    ["0×0", 0, 0],
    ["no size at all", undefined, undefined],
  ])(
    "%s: drawn at 80×24 (no line wider, the frame under 24 rows), never clearing the terminal",
    async (_, columns, rows) => {
      const err = Object.assign(captureStream(80), { columns, rows });
      const view = await createView("tui", {
        plan: tallPlan(),
        pipelines: ALL_PIPELINES,
        out: captureStream(80),
        err,
        colorLevel: 0,
      });
      for (const event of busyEvents()) view.onEvent(event);
      await view.close(null);

      const written = err.text();
      expect(written).not.toContain("\u001b[2J");
      const text = written.replace(CSI, "");
      const lastFrame = text.slice(text.lastIndexOf("gpuplan run ")).trimEnd().split("\n");
      expect(lastFrame[1]).toMatch(/^\[[█░]+\] 1\/8 steps$/);
      expect(lastFrame.length).toBeLessThanOrEqual(23);
      for (const line of text.split("\n")) expect([...line].length, line).toBeLessThanOrEqual(80);
    },
  );
});

describe("the live view's running clocks", () => {
  it("go on being drawn after the wall clock is stepped back (NTP), not only once it catches up", async () => {
    vi.useFakeTimers();
    try {
      const { createLiveView } = await import("../../../src/ui/run/tui/live-view.js");
      const { noPaint } = await import("../../../src/ui/paint.js");
      const err = captureStream(80);
      let now = T0 + 3600_000;
      const view = createLiveView(
        {
          plan: makePlan(),
          pipelines: ALL_PIPELINES,
          out: captureStream(80),
          err,
          colorLevel: 0,
          columns: 80,
        },
        noPaint,
        () => now,
      );
      for (const event of busyEvents()) view.onEvent(event);
      vi.advanceTimersByTime(200);
      const drawn = err.text().length;
      now -= 1800_000; // still after the run started: the clocks on screen change
      vi.advanceTimersByTime(2000);
      // Nothing happened in the run: only the clock's tick can have drawn a frame.
      expect(err.text().length).toBeGreaterThan(drawn);
      vi.useRealTimers(); // close() waits for ink on real timers
      await view.close(null);
    } finally {
      vi.useRealTimers();
    }
  });
});
