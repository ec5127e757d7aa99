/**
 * The run's user interface, fed by the executor. `plain`: prefixed lines on stderr, no animation
 * (not a TTY, CI). `json`: the events as JSON lines on stdout. `tui`: an ink live view on a TTY —
 * one lane per GPU with its slots, what runs in each, elapsed time, memory when known, and overall
 * progress with a bar. ink and react are imported only for `tui`.
 */

import type { RunViewContext } from "../../run/run-view.js";
import { isCi } from "../is-ci.js";
import type { ColorLevel } from "../paint.js";

export type UiMode = "auto" | "tui" | "plain" | "json";

export type { RunSummary } from "../../run/outcome/run-tally.js";
export type { RunEnding, RunView } from "../../run/run-view.js";

export interface ViewOptions extends RunViewContext {
  out: NodeJS.WriteStream;
  err: NodeJS.WriteStream;
  /** The colour level the CLI decided for `err` (src/cli/paint.ts); the live view paints with it too. */
  colorLevel: ColorLevel;
  /** Columns for the live view (tests render at a fixed width). */
  columns?: number;
  /** Rows for the live view (tests render at a fixed height). */
  rows?: number;
}

/**
 * auto → tui on an interactive terminal outside CI, else plain. CI is judged as ink judges it
 * (is-in-ci: CI set to anything but 0/false, CONTINUOUS_INTEGRATION, a CI_* variable), since ink
 * draws nothing but a last frame there. A terminal that reports no size (a pty nobody sized, as
 * `script` or some runners make) gets plain too: ink would draw every frame zero columns wide.
 * A forced `tui` there is drawn at 80×24 (tui/live-view.ts).
 */
export function resolveUiMode(
  mode: UiMode,
  terminal: { isTTY: boolean; columns?: number | undefined },
  env: NodeJS.ProcessEnv = process.env,
): Exclude<UiMode, "auto"> {
  if (mode !== "auto") return mode;
  const ci = isCi(env);
  const sized = (terminal.columns ?? 0) > 0;
  return terminal.isTTY && sized && !ci && env.TERM !== "dumb" ? "tui" : "plain";
}
