/**
 * The whole live view for one state at one instant: header and progress, one lane per GPU (and the
 * CPU), recent failures, the last output lines. Pure: same state, clock and size → same text.
 *
 * It keeps to the terminal: at most rows − 1 lines (ink clears the whole terminal on every frame
 * once its output is as tall as the terminal), every line cut at the width. The header shows
 * (cut only where the terminal is shorter than it); then, when everything fits, every lane with blank lines between; when not, a tight
 * layout where lanes that do not fit collapse into "+N more" (tightBody).
 */
import { Box, renderToString, Text } from "ink";
import { createElement as h, type ReactElement } from "react";
import { escapeText } from "../../../text/safe-text.js";
import { escapeOutputLine } from "../../output-line.js";
import { noPaint, type Paint } from "../../paint.js";
import { describeFailure, stepName } from "../format.js";
import type { RunState } from "../run-state.js";
import { headerLines } from "./header-lines.js";
import { isLaneActive, laneLines } from "./lane-lines.js";

/** Failures listed in the live view; the summary at the end lists them all. */
const SHOWN_FAILURES = 3;

export interface ScreenOptions {
  columns: number;
  /** The terminal's height; no limit when absent. */
  rows?: number;
  paint?: Paint;
  /** Each GPU lane's short UUID, by lane id (src/ui/short-uuid.ts). */
  uuids?: ReadonlyMap<string, string>;
}

export interface RunScreenProps extends ScreenOptions {
  state: RunState;
  /** Epoch ms the elapsed times are measured to. */
  now: number;
}

export function RunScreen(props: RunScreenProps): ReactElement {
  const lines = screenLines(props.state, props.now, props);
  return h(
    Box,
    { flexDirection: "column", width: props.columns },
    // An empty Text takes no row in ink: a blank line is a space.
    ...lines.map((line, i) => h(Text, { key: i, wrap: "truncate-end" }, line || " ")),
  );
}

/** The screen as text at a fixed size (tests; also what a non-live consumer could print). */
export function renderRunScreen(
  state: RunState,
  now: number,
  columns: number,
  options: Omit<ScreenOptions, "columns"> = {},
): string {
  return renderToString(h(RunScreen, { state, now, columns, ...options }), { columns });
}

interface LaneBlock {
  id: string;
  lines: string[];
  active: boolean;
}

/** The screen's lines, painted, each to be cut at the width (RunScreen's Text does it). */
function screenLines(state: RunState, now: number, options: ScreenOptions): string[] {
  const paint = options.paint ?? noPaint;
  const budget = options.rows === undefined ? Number.POSITIVE_INFINITY : Math.max(1, options.rows - 1);
  // On a terminal shorter than the header (5 rows) the header is cut too: a frame as tall as the
  // terminal makes ink clear it, scrollback included, on every frame.
  const header = headerLines(state, now, options.columns, paint).slice(0, budget);
  const lanes: LaneBlock[] = state.lanes.map((lane) => ({
    id: lane.id,
    lines: laneLines(lane, state, now, paint, options.uuids?.get(lane.id) ?? null),
    active: isLaneActive(lane, state),
  }));
  const room = budget - header.length;
  const roomy = lanes.reduce((n, lane) => n + 1 + lane.lines.length, 0) <= room;
  return [
    ...header,
    ...(roomy ? roomyBody(state, lanes, room, paint) : tightBody(state, lanes, room, paint)),
  ];
}

/** Every lane whole with a blank line before each block; failures and output in what is left. */
function roomyBody(state: RunState, lanes: readonly LaneBlock[], room: number, paint: Paint): string[] {
  const body = lanes.flatMap((lane) => ["", ...lane.lines]);
  for (const block of [failureBlock, outputBlock]) {
    const lines = block(state, paint, room - body.length - 1);
    if (lines.length > 0) body.push("", ...lines);
  }
  return body;
}

/**
 * No blank lines, and an idle lane is its title alone. In order of what matters: the busy lanes
 * (whole; the first one cut if it alone is too tall), the failures, the idle lanes, the output.
 * Lanes left out become one "+N more: ids" line.
 */
function tightBody(state: RunState, all: readonly LaneBlock[], room: number, paint: Paint): string[] {
  const lanes = all.map((lane) => (lane.active ? lane : { ...lane, lines: lane.lines.slice(0, 1) }));
  const shown = new Map<LaneBlock, string[]>();
  let used = 0;
  /** A "+N more" line is needed while some lane is not shown. */
  const moreLine = (adding = 0): number => (lanes.length - shown.size - adding > 0 ? 1 : 0);
  const add = (lane: LaneBlock): boolean => {
    if (used + lane.lines.length + moreLine(1) > room) return false;
    shown.set(lane, lane.lines);
    used += lane.lines.length;
    return true;
  };
  const busy = lanes.filter((lane) => lane.active);
  for (const lane of busy) if (!add(lane)) break;
  const first = busy[0];
  if (shown.size === 0 && first) {
    // Not even the busiest lane fits whole: its first rows, and how many more it has.
    const keep = Math.max(1, room - moreLine(1) - 1);
    const lines = first.lines.slice(0, keep);
    if (first.lines.length > keep) lines.push(paint.dim(`  +${first.lines.length - keep} more`));
    shown.set(first, lines);
    used += lines.length;
  }
  const failures = failureBlock(state, paint, room - used - moreLine());
  used += failures.length;
  for (const lane of lanes) if (!lane.active && !add(lane)) break;
  const body = lanes.flatMap((lane) => shown.get(lane) ?? []);
  const hidden = lanes.filter((lane) => !shown.has(lane));
  if (hidden.length > 0) {
    body.push(paint.dim(`+${hidden.length} more: ${hidden.map((l) => escapeText(l.id)).join(", ")}`));
  }
  body.push(...failures, ...outputBlock(state, paint, room - body.length - failures.length));
  return body.slice(0, Math.max(0, room));
}

/** "Failed (N)" and the latest failures, in at most `room` lines (then "… and N more"). */
function failureBlock(state: RunState, paint: Paint, room: number): string[] {
  const failures = state.failures;
  if (failures.length === 0 || room < 1) return [];
  const fitting = failures.length <= SHOWN_FAILURES && failures.length + 1 <= room;
  const shown = fitting ? failures.length : Math.max(0, Math.min(SHOWN_FAILURES, room - 2));
  const more = failures.length - shown;
  const lines = [
    paint.bold(paint.red(`Failed (${failures.length})`)),
    ...failures
      .slice(failures.length - shown)
      .map(
        (f) =>
          `${paint.red("  ✗ ")}${stepName(f.pipeline, f.step)} on ${escapeText(f.device)}: ${describeFailure(f)}`,
      ),
    ...(more > 0 ? [paint.dim(`  … and ${more} more`)] : []),
  ];
  return lines.slice(0, room);
}

/** The last lines steps printed, as many as `room` allows. */
function outputBlock(state: RunState, paint: Paint, room: number): string[] {
  if (room < 1) return [];
  const keepColor = paint.level > 0;
  return state.output.slice(-room).map((o) => {
    const line = escapeOutputLine(o.line, keepColor);
    return `${paint.dim(`[${stepName(o.pipeline, o.step)}] `)}${o.stream === "stderr" ? paint.yellow(line) : line}`;
  });
}
