/** What a bar, a held slot or a table row says on hover (a short tooltip) and on click (the details panel). */
import type { Bar, ReportModel, StepRow } from "../../../report/model.js";
import { argvText, dur, esc, OUTCOME_TEXT, ratio, size } from "./text.js";

const line = (label: string, value: string): string =>
  `<div class="kv"><span class="k">${esc(label)}</span><span class="v">${value}</span></div>`;

export function barTooltip(model: ReportModel, i: number): string {
  const b = model.bars[i]!;
  const r = model.rows[b.row]!;
  const name = `${model.pipelines[r.pipeline]}/${r.step}`;
  return (
    `<div class="tt-title">${esc(name)}</div>` +
    `<div class="tt-sub o-text-${esc(b.outcome)}">${esc(b.outcome === "kept" ? "done in an earlier session (skipped on resume)" : (OUTCOME_TEXT[b.outcome] ?? b.outcome))}` +
    `${b.outcome === "retried" && b.status ? ` (${esc(OUTCOME_TEXT[b.status] ?? b.status)})` : ""}` +
    `${r.attempts > 1 ? ` · attempt ${b.attempt} of ${r.attempts}` : ""}</div>` +
    line(
      "device",
      esc(b.device) + (r.uuid && b.device !== "cpu" ? ` <span class="uuid">${esc(r.uuid)}</span>` : ""),
    ) +
    line(
      "duration",
      `${esc(dur(b.durationMs))}${r.estimateMs !== null ? ` (estimate ${esc(dur(r.estimateMs))})` : ""}`,
    ) +
    (b.exitCode !== null || b.signal ? line("exit", esc(b.signal ?? `code ${b.exitCode}`)) : "") +
    (b.peakVramBytes !== null
      ? line("peak VRAM", `${esc(size(b.peakVramBytes))} of ${esc(size(r.budgetBytes))}`)
      : "") +
    `<div class="tt-hint">click for details</div>`
  );
}

export function barDetails(model: ReportModel, i: number): string {
  const b = model.bars[i]!;
  const r = model.rows[b.row]!;
  return `${rowHeading(model, r)}${attemptList(model, r, i)}${attemptDetails(model, b, r)}${stepFacts(model, r)}`;
}

export function rowDetails(model: ReportModel, rowIndex: number): string {
  const r = model.rows[rowIndex]!;
  const last = r.bars.at(-1);
  return `${rowHeading(model, r)}${attemptList(model, r, last ?? -1)}${last !== undefined ? attemptDetails(model, model.bars[last]!, r) : ""}${stepFacts(model, r)}`;
}

function rowHeading(model: ReportModel, r: StepRow): string {
  return (
    `<h3><span class="pl">${esc(model.pipelines[r.pipeline])}</span> / <span class="st">${esc(r.step)}</span></h3>` +
    `<div class="badge o-${esc(r.outcome)}">${esc(OUTCOME_TEXT[r.outcome] ?? r.outcome)}</div>`
  );
}

function attemptList(model: ReportModel, r: StepRow, current: number): string {
  if (r.bars.length <= 1) return "";
  const items = r.bars
    .map((bi) => {
      const b = model.bars[bi]!;
      return `<li${bi === current ? ' class="cur"' : ""}><a href="#" data-goto="${bi}">attempt ${b.attempt}</a> on ${esc(b.device)}: ${esc(OUTCOME_TEXT[b.outcome] ?? b.outcome)}${b.status && b.status !== "ok" ? ` (${esc(b.status)})` : ""}, ${esc(dur(b.durationMs))}</li>`;
    })
    .join("");
  return `<ol class="attempts">${items}</ol>`;
}

function attemptDetails(model: ReportModel, b: Bar, r: StepRow): string {
  const parts = [
    line(
      "attempt",
      `${b.attempt}${r.attempts > 1 ? ` of ${r.attempts}` : ""}${b.onHost ? " (a host step: its pipeline holds the slot)" : ""}`,
    ),
    line("device", esc(b.device)),
    line("GPU UUID", r.uuid && b.device !== "cpu" ? `<span class="uuid">${esc(r.uuid)}</span>` : "–"),
    line("started", `+${esc(dur(b.start))}`),
    line(
      model.header.kind === "plan" ? "estimate" : "duration",
      `${esc(dur(b.durationMs))}${model.header.kind === "run" && r.estimateMs !== null ? ` vs estimate ${esc(dur(r.estimateMs))}${r.estimateMs > 0 ? ` (${esc(ratio(b.durationMs / r.estimateMs))})` : ""}` : ""}`,
    ),
  ];
  if (model.header.kind === "run") {
    parts.push(
      line("exit", b.signal ? `signal ${esc(b.signal)}` : b.exitCode !== null ? `code ${b.exitCode}` : "–"),
    );
    if (b.framework) parts.push(line("OOM from", esc(b.framework)));
    parts.push(
      line(
        "peak VRAM",
        `${b.peakVramBytes !== null ? esc(size(b.peakVramBytes)) : "not measured"} · budget ${esc(size(r.budgetBytes))}${r.vramBytes !== null ? ` · estimate ${esc(size(r.vramBytes))}` : ""}`,
      ),
    );
    if (b.load) parts.push(line("warm worker", `loaded its model in ${esc(dur(b.load[1] - b.load[0]))}`));
    if (b.reused) parts.push(line("warm worker", "reused (already loaded)"));
    if (b.hint) parts.push(line("hint", esc(b.hint)));
    parts.push(line("log", b.logPath ? `<code>${esc(b.logPath)}</code>` : "–"));
    if (b.stderrPath) parts.push(line("stderr", `<code>${esc(b.stderrPath)}</code>`));
    if (b.stderrTail.length)
      parts.push(
        `<div class="k">last lines of stderr</div><pre class="tail">${esc(b.stderrTail.join("\n"))}</pre>`,
      );
  }
  return `<div class="attempt">${parts.join("")}</div>`;
}

function stepFacts(model: ReportModel, r: StepRow): string {
  const parts = [
    line("pipeline", esc(model.pipelines[r.pipeline])),
    line("step", esc(r.step)),
    line("argv", r.argv.length ? `<code>${esc(argvText(r.argv))}</code>` : "–"),
  ];
  if (r.worker) parts.push(line("worker", esc(r.worker)));
  if (r.exclusive) parts.push(line("exclusive", "owns the whole GPU while it runs"));
  if (r.waitMs > 0) parts.push(line("waited", `${esc(dur(r.waitMs))} for a slot`));
  if (r.planned) parts.push(line("planned", `+${esc(dur(r.planned[0]))} – +${esc(dur(r.planned[1]))}`));
  if (r.skipReason) parts.push(line("why", esc(r.skipReason)));
  return `<div class="facts">${parts.join("")}</div>`;
}

export function holdTooltip(model: ReportModel, i: number): string {
  const h = model.holds[i]!;
  const lane = model.lanes[h.lane]!;
  const what = h.kind === "exclusive" ? "held for an exclusive step of" : "held by";
  return `<div class="tt-title">${esc(lane.label)}</div><div>${what} <b>${esc(model.pipelines[h.pipeline])}</b></div>${line("from", `+${esc(dur(h.start))}`)}${line("for", esc(dur(h.end - h.start)))}`;
}

export function waitTooltip(model: ReportModel, i: number): string {
  const w = model.waits[i]!;
  const r = model.rows[w.row]!;
  return `<div class="tt-title">${esc(model.pipelines[r.pipeline])}/${esc(r.step)}</div><div>waited ${esc(dur(w.end - w.start))} for the rest of its GPU (exclusive)</div>`;
}

export function skipTooltip(model: ReportModel, i: number): string {
  const s = model.skips[i]!;
  const r = model.rows[s.row]!;
  return `<div class="tt-title">${esc(model.pipelines[r.pipeline])}/${esc(r.step)}</div><div>skipped: ${esc(s.reason)}</div>`;
}
