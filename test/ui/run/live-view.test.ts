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
