import { describe, expect, it } from "vitest";
import { createView } from "../../../src/ui/run/index.js";
import {
  ALL_PIPELINES,
  busyEvents,
  captureStream,
  failedSummary,
  makePlan,
  plainText,
  RUN,
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
