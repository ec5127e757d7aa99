/** The steps table: one row per step, sortable by duration, estimate error, peak VRAM and slot wait. */
import type { ReportModel, StepRow } from "../../../report/model.js";
import { dur, esc, OUTCOME_TEXT, ratio, size } from "./text.js";

export type SortKey = "order" | "duration" | "error" | "peak" | "wait" | "estimate";

/** How far off an estimate was, either way: ×3 slower and ÷3 faster are as wrong. */
const errorOf = (r: StepRow): number =>
  r.estimateRatio && r.estimateRatio > 0 ? Math.abs(Math.log(r.estimateRatio)) : -1;

const KEYS: Record<Exclude<SortKey, "order">, (r: StepRow) => number> = {
  duration: (r) => r.durationMs ?? -1,
  error: errorOf,
  peak: (r) => r.peakVramBytes ?? r.vramBytes ?? -1,
  wait: (r) => r.waitMs,
  estimate: (r) => r.estimateMs ?? -1,
};

export function sortedRows(model: ReportModel, key: SortKey): number[] {
  const order = model.rows.map((_, i) => i);
  if (key === "order") return order;
  const f = KEYS[key];
  return order.sort((a, b) => f(model.rows[b]!) - f(model.rows[a]!) || a - b);
}

export function tableHead(model: ReportModel, key: SortKey): string {
  const run = model.header.kind === "run";
  // Fixed widths (the table lays out once, not again for every scrolled-in row); names share the rest.
  const th = (label: string, width: number | null, sort?: SortKey) => {
    const style = width ? ` style="width:${width}px"` : "";
    return sort
      ? `<th${style}><button type="button" class="sort${key === sort ? " on" : ""}" data-sort="${sort}">${esc(label)}${key === sort ? " ▼" : ""}</button></th>`
      : `<th${style}>${esc(label)}</th>`;
  };
  return `<tr>${[
    th("#", 54, "order"),
    th("pipeline", null),
    th("step", null),
    th("device", 84),
    run ? th("outcome", 150) : "",
    run ? th("attempts", 70) : "",
    run ? th("duration", 84, "duration") : "",
    th("estimate", 84, "estimate"),
    run ? th("estimate error", 120, "error") : "",
    run ? th("peak VRAM", 92, "peak") : th("VRAM", 92, "peak"),
    th("budget", 84),
    run ? th("slot wait", 84, "wait") : "",
  ].join("")}</tr>`;
}

export function tableBody(model: ReportModel, order: readonly number[]): string {
  const run = model.header.kind === "run";
  const out: string[] = [];
  for (const i of order) {
    const r = model.rows[i]!;
    out.push(
      `<tr data-row="${i}"><td class="n">${i + 1}</td><td>${esc(model.pipelines[r.pipeline])}</td><td>${esc(r.step)}</td><td>${esc(r.device)}</td>` +
        (run
          ? `<td><span class="dot o-${esc(r.outcome)}"></span>${esc(OUTCOME_TEXT[r.outcome] ?? r.outcome)}</td><td class="n">${r.attempts}</td><td class="n">${esc(dur(r.durationMs))}</td>`
          : "") +
        `<td class="n">${esc(dur(r.estimateMs))}</td>` +
        (run ? `<td class="n">${esc(ratio(r.estimateRatio))}</td>` : "") +
        `<td class="n">${run ? esc(size(r.peakVramBytes)) : esc(size(r.vramBytes))}</td><td class="n">${esc(size(r.budgetBytes))}</td>` +
        (run ? `<td class="n">${r.waitMs ? esc(dur(r.waitMs)) : ""}</td>` : "") +
        "</tr>",
    );
  }
  return out.join("");
}
