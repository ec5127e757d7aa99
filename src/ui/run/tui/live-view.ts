/**
 * The live view on a TTY: ink renders the RunScreen on stderr (stdout stays for results), redrawn
 * at most every 100 ms while events arrive and once a second for the clocks. Ctrl-C is left to
 * the executor (ink does not take the terminal's input), which interrupts the run and then calls
 * close(): the view unmounts, keeping its last frame, and prints the same summary as the plain view.
 */
import { render } from "ink";
import { createElement as h } from "react";
import type { Paint } from "../../paint.js";
import { shortUuids } from "../../short-uuid.js";
import { reduceRunState } from "../reduce-run-state.js";
import { appendOutput, createRunState, type RunState } from "../run-state.js";
import { formatSummary } from "../summary.js";
import type { RunEnding, RunSummary, RunView, ViewOptions } from "../view.js";
import { writeOut } from "../write-out.js";
import { RunScreen } from "./run-screen.js";

const REDRAW_MS = 100;
const CLOCK_MS = 1000;

/**
 * The size drawn at when the terminal reports none (0×0, or no size at all: a pty nobody sized, as
 * `script`, `docker exec -t` before its first resize and some runners make). `--ui auto` picks
 * plain lines there; a forced `--ui tui` is drawn at 80×24, as vim, less and ncurses do without a
 * size (and ink itself for the width), rather than refused: the user asked for the live view, and
 * such a terminal often learns its real size a moment later (SIGWINCH), which the view then
 * follows. Before, ink was handed the zero size: every frame was laid out zero columns wide (drawn
 * empty) and, at 0 rows, taken for a full screen — the terminal and its scrollback cleared at
 * every redraw.
 */
const DEFAULT_COLUMNS = 80;
const DEFAULT_ROWS = 24;

const sizeOr = (size: number | undefined, fallback: number): number =>
  size !== undefined && size > 0 ? size : fallback;

const isSized = (stream: NodeJS.WriteStream): boolean =>
  sizeOr(stream.columns, 0) > 0 && sizeOr(stream.rows, 0) > 0;

/**
 * The stream as ink sees it: the same stream (writes, resize events), with the default for a size
 * it does not report. Used only for a terminal that had no size at the start, so the usual path
 * hands ink the stream itself.
 */
function withDefaultSize(stream: NodeJS.WriteStream): NodeJS.WriteStream {
  return new Proxy(stream, {
    get(target, key) {
      if (key === "columns") return sizeOr(target.columns, DEFAULT_COLUMNS);
      if (key === "rows") return sizeOr(target.rows, DEFAULT_ROWS);
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** `paint` is the painter of `options.colorLevel` (createView loads it). */
export function createLiveView(options: ViewOptions, paint: Paint, clock: () => number = Date.now): RunView {
  let state: RunState = createRunState(options.plan, options.pipelines);
  let dirty = false;
  let lastDraw = 0;
  // ink's own chalk would colour by its own reading of the terminal (and ignore NO_COLOR): the
  // screen paints every colour itself, at the level the CLI decided, and uses no ink colour prop.
  const short = shortUuids(options.plan.registry.map((g) => g.uuid));
  const uuids = new Map(options.plan.registry.map((g) => [g.gpu, short(g.uuid)]));
  const columns = (): number => options.columns ?? sizeOr(options.err.columns, DEFAULT_COLUMNS);
  const rows = (): number => options.rows ?? sizeOr(options.err.rows, DEFAULT_ROWS);
  const screen = () => h(RunScreen, { state, now: clock(), columns: columns(), paint, uuids, rows: rows() });
  const instance = render(screen(), {
    stdout: isSized(options.err) ? options.err : withDefaultSize(options.err),
    stderr: options.err,
    exitOnCtrlC: false,
    patchConsole: false,
  });
  const draw = (): void => {
    dirty = false;
    lastDraw = clock();
    instance.rerender(screen());
  };
  const timer = setInterval(() => {
    // No new frame while the last one waits for a terminal that stopped reading (Ctrl-S, a stalled
    // ssh): frames would pile up in memory; the next one drawn once it reads again shows it all.
    if ((options.err.writableLength ?? 0) > 0) return;
    // Either way: a wall clock stepped back (NTP) must not stop the clocks on screen until it catches up.
    if (dirty || Math.abs(clock() - lastDraw) >= CLOCK_MS) draw();
  }, REDRAW_MS);
  // The run's own work keeps the process alive; the redraw clock must not.
  timer.unref();
  let closed = false;
  return {
    onEvent(event) {
      state = reduceRunState(state, event);
      dirty = true;
    },
    onOutput(pipeline, step, stream, line) {
      state = appendOutput(state, { pipeline, step, stream, line });
      dirty = true;
    },
    async close(summary: RunSummary | null, ending?: RunEnding) {
      if (closed) return;
      closed = true;
      clearInterval(timer);
      draw();
      instance.unmount();
      await instance.waitUntilExit();
      if (summary !== null) await writeOut(options.err, formatSummary(summary, paint, ending));
    },
  };
}
