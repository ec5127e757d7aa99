/**
 * The whole live view for one state at one instant: header and progress, one lane per GPU (and the
 * CPU), recent failures, the last output lines. Pure: same state, clock and width → same text.
 */
import { Box, renderToString, Text } from "ink";
import { createElement as h, type ReactElement } from "react";
import { describeFailure } from "../format.js";
import type { RunState } from "../run-state.js";
import { HeaderView } from "./header-view.js";
import { LaneView } from "./lane-view.js";

/** Failures listed in the live view; the summary at the end lists them all. */
const SHOWN_FAILURES = 3;

export interface RunScreenProps {
  state: RunState;
  /** Epoch ms the elapsed times are measured to. */
  now: number;
  columns: number;
}

export function RunScreen(props: RunScreenProps): ReactElement {
  const { state, now, columns } = props;
  const children: ReactElement[] = [h(HeaderView, { key: "header", state, now, columns })];
  for (const lane of state.lanes) {
    children.push(h(Box, { key: `lane-${lane.id}`, marginTop: 1 }, h(LaneView, { lane, state, now })));
  }
  if (state.failures.length > 0) {
    const recent = state.failures.slice(-SHOWN_FAILURES);
    const more = state.failures.length - recent.length;
    children.push(
      h(
        Box,
        { key: "failures", flexDirection: "column", marginTop: 1 },
        h(Text, { bold: true, color: "red" }, `Failed (${state.failures.length})`),
        ...recent.map((f, i) =>
          h(
            Text,
            { key: `f${i}`, wrap: "truncate-end" },
            h(Text, { color: "red" }, "  ✗ "),
            `${f.pipeline}/${f.step} on ${f.device}: ${describeFailure(f)}`,
          ),
        ),
        ...(more > 0 ? [h(Text, { key: "more", dimColor: true }, `  … and ${more} more`)] : []),
      ),
    );
  }
  if (state.output.length > 0) {
    children.push(
      h(
        Box,
        { key: "output", flexDirection: "column", marginTop: 1 },
        ...state.output.map((o, i) =>
          h(
            Text,
            { key: `o${i}`, wrap: "truncate-end" },
            h(Text, { dimColor: true }, `[${o.pipeline}/${o.step}] `),
            o.stream === "stderr" ? h(Text, { color: "yellow" }, o.line) : o.line,
          ),
        ),
      ),
    );
  }
  return h(Box, { flexDirection: "column", width: columns }, ...children);
}

/** The screen as text at a fixed width (tests; also what a non-live consumer could print). */
export function renderRunScreen(state: RunState, now: number, columns: number): string {
  return renderToString(h(RunScreen, { state, now, columns }), { columns });
}
