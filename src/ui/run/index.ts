/**
 * The run's user interface, picked by mode. `plain` and `json` load nothing heavy; ink and react
 * are imported only for `tui`, through the dynamic import below — never add a static import of
 * ./tui here (test/run/ui/import-graph.test.ts checks).
 */
import { type Problem, warning } from "../../problems/problem.js";
import { displayText } from "../../text/safe-text.js";
import { loadPaint } from "../paint.js";
import { formatHuman } from "../problems/human.js";
import { createJsonView } from "./json-view.js";
import { createPlainView } from "./plain-view.js";
import { writeWithoutBlocking } from "./terminal-writes.js";
import type { RunView, ViewOptions } from "./view.js";

export type { RunView, ViewOptions } from "./view.js";
export { resolveUiMode } from "./view.js";

/** A view for the run; call resolveUiMode first to turn `auto` into one of these. */
export async function createView(
  mode: "tui" | "plain" | "json",
  options: ViewOptions,
  loadLive: () => Promise<LiveViewModule> = loadLiveView,
): Promise<RunView> {
  const view = await createModeView(mode, options, loadLive);
  if (mode === "json") return view;
  // A terminal that stops reading must not stop the run (terminal-writes.ts).
  const restore = writeWithoutBlocking(options.err);
  return {
    onEvent: (event) => view.onEvent(event),
    onOutput: (pipeline, step, stream, line) => view.onOutput(pipeline, step, stream, line),
    async close(summary, ending) {
      try {
        await view.close(summary, ending);
      } finally {
        await restore();
      }
    },
  };
}

async function createModeView(
  mode: "tui" | "plain" | "json",
  options: ViewOptions,
  loadLive: () => Promise<LiveViewModule>,
): Promise<RunView> {
  switch (mode) {
    case "json":
      return createJsonView(options);
    case "plain":
      return createPlainView(options, await loadPaint(options.colorLevel));
    case "tui": {
      const paint = await loadPaint(options.colorLevel);
      let live: LiveViewModule;
      try {
        live = await loadLive();
      } catch (e) {
        // The steps matter more than how they are drawn: a live view that cannot load (Node 20's
        // loader with packages reached through symbolic links, as pnpm lays them out, gave
        // "onetime is not a function" inside ink's dependencies) is said, and the run goes on in
        // plain lines instead of ending before its first step.
        options.err.write(`${formatHuman([unavailable(e)], [], paint)}\n`);
        return createPlainView(options, paint);
      }
      return live.createLiveView(options, paint);
    }
  }
}

type LiveViewModule = typeof import("./tui/live-view.js");

const loadLiveView = async (): Promise<LiveViewModule> =>
  (await import("./tui/open-live-view.js")).loadLiveView();

function unavailable(e: unknown): Problem {
  const reason = e instanceof Error ? e.message : String(e);
  return warning({
    code: "live-view-unavailable",
    message: `the live view (--ui tui) could not be loaded (${displayText(reason, 200)}); the run is shown in plain lines`,
    hint: "this is a bug in gpuplan or its installation: please report it with this message; --ui plain says the same without trying",
  });
}
