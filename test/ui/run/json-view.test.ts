import { describe, expect, it } from "vitest";
import { createView } from "../../../src/ui/run/index.js";
import { ALL_PIPELINES, captureStream, failedSummary, failureEvents, makePlan } from "./fixtures.js";

describe("the JSON view", () => {
  it("writes exactly the events, one JSON line each, then a run.summary line; nothing on stderr", async () => {
    const out = captureStream();
    const err = captureStream();
    const view = await createView("json", {
      plan: makePlan(),
      pipelines: ALL_PIPELINES,
      out,
      err,
      colorLevel: 1,
    });
    const events = failureEvents();
    for (const event of events) view.onEvent(event);
    view.onOutput("plate-1", "segment", "stderr", "not an event");
    await view.close(failedSummary());

    expect(err.text()).toBe("");
    const text = out.text();
    expect(text.endsWith("\n")).toBe(true);
    const lines = text.trimEnd().split("\n");
    expect(lines).toHaveLength(events.length + 1);
    expect(lines.slice(0, -1).map((l) => JSON.parse(l))).toEqual(events);
    const summary = JSON.parse(lines.at(-1) ?? "");
    expect(summary).toMatchObject({
      event: "run.summary",
      pipeline: null,
      step: null,
      device: null,
      ...failedSummary(),
    });
    expect(Number.isNaN(Date.parse(summary.ts))).toBe(false);
    // Every line is a run event as schemas/run-events.schema.json has it, the summary line included.
    const { default: validateRunEvent } = await import("../../../src/generated/run-events-validator.js");
    for (const line of lines) expect(validateRunEvent(JSON.parse(line)), line).toBe(true);
    // biome-ignore lint/suspicious/noControlCharactersInRegex: machine output carries no colour
    expect(text).not.toMatch(/\u001b/);
  });
});
