/** Top of the live view: run id and elapsed time, the progress bar, and the step counts. */
import { Box, Text } from "ink";
import { createElement as h, type ReactElement } from "react";
import { formatElapsed } from "../format.js";
import { countSteps, type RunState } from "../run-state.js";
import { progressBar } from "./progress-bar.js";

export function HeaderView(props: { state: RunState; now: number; columns: number }): ReactElement {
  const { state, now, columns } = props;
  const counts = countSteps(state);
  const elapsed = state.startedMs === null ? "" : `  ${formatElapsed(now - state.startedMs)}`;
  const stepsText = `${counts.done}/${counts.total} steps`;
  const barWidth = Math.max(10, Math.min(40, columns - stepsText.length - 4));
  return h(
    Box,
    { flexDirection: "column" },
    h(
      Text,
      { wrap: "truncate-end" },
      h(Text, { bold: true }, `gpuplan run ${state.run ?? ""}`.trimEnd()),
      h(Text, { dimColor: true }, elapsed),
    ),
    h(
      Text,
      { wrap: "truncate-end" },
      h(
        Text,
        { color: counts.failed > 0 ? "red" : "green" },
        progressBar(counts.done, counts.total, barWidth),
      ),
      ` ${stepsText}`,
    ),
    h(
      Text,
      { wrap: "truncate-end" },
      h(Text, { color: "green" }, `ok ${counts.ok}`),
      " · ",
      h(Text, { color: counts.failed > 0 ? "red" : undefined }, `failed ${counts.failed}`),
      ` · skipped ${counts.skipped} · running ${counts.running} · `,
      h(Text, { color: counts.waiting > 0 ? "yellow" : undefined }, `waiting ${counts.waiting}`),
    ),
  );
}
