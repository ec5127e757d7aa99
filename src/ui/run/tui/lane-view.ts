/**
 * One lane of the live view: a GPU (or the CPU) with its slots, what runs in each and for how
 * long, memory when known, and how many pipelines wait for it.
 */
import { Box, Text } from "ink";
import { createElement as h, type ReactElement } from "react";
import { formatBytes, formatElapsed } from "../format.js";
import { type Lane, laneIdOf, type RunningStep, type RunState } from "../run-state.js";

export function LaneView(props: { lane: Lane; state: RunState; now: number }): ReactElement {
  const { lane, state, now } = props;
  const onLane = Object.values(state.running).filter((r) => laneIdOf(state, r.device) === lane.id);
  const rows: ReactElement[] = [];
  const shown = new Set<string>();
  lane.slots.forEach((holder, i) => {
    const label = `slot ${i}`.padEnd(7);
    if (holder === null) {
      rows.push(row(`${lane.id}-${i}`, label, h(Text, { dimColor: true }, "free")));
      return;
    }
    const first = lane.slots.findIndex((s) => s?.pipeline === holder.pipeline);
    if (holder.exclusive && first !== i) {
      rows.push(
        row(`${lane.id}-${i}`, label, h(Text, { dimColor: true }, `held for ${holder.pipeline} (exclusive)`)),
      );
      return;
    }
    const step = onLane.find((r) => r.pipeline === holder.pipeline) ?? findRunning(state, holder.pipeline);
    if (step) shown.add(`${step.pipeline}/${step.step}`);
    rows.push(row(`${lane.id}-${i}`, label, holding(holder.pipeline, step, now, holder.exclusive)));
  });
  // Steps on this lane outside any slot: the CPU lane, or GPU steps the lock events did not place.
  for (const step of onLane) {
    if (shown.has(`${step.pipeline}/${step.step}`)) continue;
    rows.push(
      row(
        `${lane.id}-${step.pipeline}/${step.step}`,
        "·".padEnd(7),
        holding(step.pipeline, step, now, false),
      ),
    );
  }
  // Warm workers keep a model loaded on this device between pipelines.
  for (const w of lane.warm) {
    const what = w.state === "idle" ? `idle ${formatElapsed(now - w.sinceMs)}` : w.state;
    rows.push(
      row(
        `${lane.id}-warm-${w.key}`,
        "warm".padEnd(7),
        h(Text, null, w.key, h(Text, { dimColor: true }, `  ${what}`)),
      ),
    );
  }
  if (rows.length === 0) rows.push(row(`${lane.id}-idle`, "", h(Text, { dimColor: true }, "idle")));
  return h(Box, { flexDirection: "column" }, h(Text, { wrap: "truncate-end" }, ...laneTitle(lane)), ...rows);
}

function laneTitle(lane: Lane): (string | ReactElement)[] {
  const parts: (string | ReactElement)[] = [h(Text, { key: "id", bold: true, color: "cyan" }, lane.id)];
  if (lane.name) parts.push(`  ${lane.name}`);
  const details: string[] = [];
  if (lane.slotCount > 0) {
    const busy = lane.slots.filter((s) => s !== null).length;
    details.push(`${busy}/${lane.slotCount} slots`);
  }
  if (lane.memory) {
    details.push(`mem ${formatBytes(lane.memory.usedBytes)} / ${formatBytes(lane.memory.totalBytes)}`);
  } else if (lane.memoryBudgetBytes !== null) {
    details.push(`budget ${formatBytes(lane.memoryBudgetBytes)}`);
  }
  if (details.length > 0) parts.push(h(Text, { key: "details", dimColor: true }, `  ${details.join(" · ")}`));
  if (lane.waiting.length > 0) {
    parts.push(h(Text, { key: "waiting", color: "yellow" }, `  ${lane.waiting.length} waiting`));
  }
  return parts;
}

/** `  slot 0  <content>`, or `  <content>` on a lane without slots. */
function row(key: string, label: string, content: ReactElement): ReactElement {
  return h(Text, { key, wrap: "truncate-end" }, label ? `  ${label} ` : "  ", content);
}

function holding(
  pipeline: string,
  step: RunningStep | undefined,
  now: number,
  exclusive: boolean,
): ReactElement {
  const what = step ? `${pipeline} › ${step.step}` : `${pipeline} · between steps`;
  const elapsed = step ? `  ${formatElapsed(now - step.startedMs)}` : "";
  const attempt = step && step.attempt > 1 ? `  attempt ${step.attempt}` : "";
  return h(
    Text,
    null,
    what,
    h(Text, { dimColor: true }, elapsed),
    h(Text, { color: "yellow" }, attempt),
    exclusive ? h(Text, { color: "magenta" }, "  exclusive") : "",
  );
}

function findRunning(state: RunState, pipeline: string): RunningStep | undefined {
  return Object.values(state.running).find((r) => r.pipeline === pipeline);
}
