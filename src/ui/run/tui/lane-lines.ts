/**
 * One lane of the live view as lines: a GPU (or the CPU) with its slots, what runs in each and for
 * how long, memory when known, and how many pipelines wait for it. Names are escaped here.
 */

import { displayCut, escapeText } from "../../../text/safe-text.js";
import { formatDuration } from "../../../units/duration.js";
import { formatSize } from "../../../units/size.js";
import type { Paint } from "../../paint.js";
import { type Lane, laneIdOf, type RunningStep, type RunState } from "../run-state.js";

/** The lane's title and then one line per slot, unplaced step and warm worker (or "idle"); `uuid` is the GPU's short UUID. */
export function laneLines(
  lane: Lane,
  state: RunState,
  now: number,
  paint: Paint,
  uuid: string | null,
): string[] {
  const onLane = Object.values(state.running).filter((r) => laneIdOf(state, r.device) === lane.id);
  const rows: string[] = [];
  const shown = new Set<string>();
  lane.slots.forEach((holder, i) => {
    const label = `slot ${i}`.padEnd(7);
    if (holder === null) {
      rows.push(row(label, paint.dim("free")));
      return;
    }
    const first = lane.slots.findIndex((s) => s?.pipeline === holder.pipeline);
    if (holder.exclusive && first !== i) {
      rows.push(row(label, paint.dim(`held for ${displayCut(holder.pipeline)} (exclusive)`)));
      return;
    }
    const step = onLane.find((r) => r.pipeline === holder.pipeline) ?? findRunning(state, holder.pipeline);
    if (step) shown.add(`${step.pipeline}/${step.step}`);
    rows.push(row(label, holding(holder.pipeline, step, now, holder.exclusive, paint)));
  });
  // Steps on this lane outside any slot: the CPU lane, or GPU steps the lock events did not place.
  for (const step of onLane) {
    if (shown.has(`${step.pipeline}/${step.step}`)) continue;
    rows.push(row("·".padEnd(7), holding(step.pipeline, step, now, false, paint)));
  }
  // Warm workers keep a model loaded on this device between pipelines.
  for (const w of lane.warm) {
    const what = w.state === "idle" ? `idle ${formatDuration(now - w.sinceMs, "clock")}` : w.state;
    rows.push(row("warm".padEnd(7), `${escapeText(w.key)}${paint.dim(`  ${what}`)}`));
  }
  if (rows.length === 0) rows.push(row("", paint.dim("idle")));
  return [laneTitle(lane, paint, uuid), ...rows];
}

/** Whether anything happens on the lane: a slot held, a step running, a pipeline waiting, a worker busy. */
export function isLaneActive(lane: Lane, state: RunState): boolean {
  return (
    lane.slots.some((s) => s !== null) ||
    lane.waiting.length > 0 ||
    lane.warm.some((w) => w.state !== "idle") ||
    Object.values(state.running).some((r) => laneIdOf(state, r.device) === lane.id)
  );
}

/** `cuda:0  NVIDIA A100  1/2 slots · mem 30 GiB / 80 GiB  1 waiting  GPU-5c1e8f2a` (`uuid` short already). */
function laneTitle(lane: Lane, paint: Paint, uuid: string | null): string {
  let title = paint.bold(paint.cyan(escapeText(lane.id)));
  if (lane.name) title += `  ${escapeText(lane.name)}`;
  const details: string[] = [];
  if (lane.slotCount > 0) {
    const busy = lane.slots.filter((s) => s !== null).length;
    details.push(`${busy}/${lane.slotCount} slots`);
  }
  if (lane.memory) {
    details.push(`mem ${formatSize(lane.memory.usedBytes)} / ${formatSize(lane.memory.totalBytes)}`);
  } else if (lane.memoryBudgetBytes !== null) {
    details.push(`budget ${formatSize(lane.memoryBudgetBytes)}`);
  }
  if (details.length > 0) title += paint.dim(`  ${details.join(" · ")}`);
  if (lane.waiting.length > 0) title += paint.yellow(`  ${lane.waiting.length} waiting`);
  if (uuid) title += paint.dim(`  ${uuid}`);
  return title;
}

/** `  slot 0  <content>`, or `  <content>` on a lane without slots. */
function row(label: string, content: string): string {
  return label ? `  ${label} ${content}` : `  ${content}`;
}

function holding(
  pipeline: string,
  step: RunningStep | undefined,
  now: number,
  exclusive: boolean,
  paint: Paint,
): string {
  const what = step
    ? `${displayCut(pipeline)} › ${displayCut(step.step)}`
    : `${displayCut(pipeline)} · between steps`;
  const elapsed = step ? paint.dim(`  ${formatDuration(now - step.startedMs, "clock")}`) : "";
  const attempt = step && step.attempt > 1 ? paint.yellow(`  attempt ${step.attempt}`) : "";
  return `${what}${elapsed}${attempt}${exclusive ? paint.magenta("  exclusive") : ""}`;
}

function findRunning(state: RunState, pipeline: string): RunningStep | undefined {
  return Object.values(state.running).find((r) => r.pipeline === pipeline);
}
