/**
 * The run's user interface, picked by mode. `plain` and `json` load nothing heavy; ink and react
 * are imported only for `tui`, through the dynamic import below — never add a static import of
 * ./tui here (test/run/ui/import-graph.test.ts checks).
 */
import { loadPaint } from "../paint.js";
import { createJsonView } from "./json-view.js";
import { createPlainView } from "./plain-view.js";
import type { RunView, ViewOptions } from "./view.js";

export type { RunView, ViewOptions } from "./view.js";
export { resolveUiMode } from "./view.js";

/** A view for the run; call resolveUiMode first to turn `auto` into one of these. */
export async function createView(mode: "tui" | "plain" | "json", options: ViewOptions): Promise<RunView> {
  switch (mode) {
    case "json":
      return createJsonView(options);
    case "plain":
      return createPlainView(options, await loadPaint(options.colorLevel));
    case "tui": {
      const { createLiveView } = await (await import("./tui/open-live-view.js")).loadLiveView();
      return createLiveView(options, await loadPaint(options.colorLevel));
    }
  }
}
