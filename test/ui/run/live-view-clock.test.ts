// The live view redraws its running clocks once a second; a wall clock stepped back (NTP) stopped
// that until it caught up. ink draws only the last frame where it thinks it runs in CI (is-in-ci,
// read as ink loads), which would hide every redraw here: this file runs as a terminal would.
import { afterAll, describe, expect, it, vi } from "vitest";
import { ALL_PIPELINES, busyEvents, captureStream, makePlan, T0 } from "./fixtures.js";

vi.stubEnv("CI", "0");
vi.stubEnv("CONTINUOUS_INTEGRATION", "0");
afterAll(() => {
  vi.unstubAllEnvs();
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
