/**
 * The report page's script: reads the model from the page (a JSON script element), draws the
 * timeline, the memory charts and the steps table, and wires hover, click, sorting and zoom. It
 * marks `report:rendered` (drawn) and `report:painted` (the first frame after) with the
 * Performance API, so a test can read how long the page took in the page itself.
 */
import type { ReportModel } from "../../../report/model.js";
import { type PackedModel, unpackModel } from "../wire.js";
import { barDetails, barTooltip, holdTooltip, rowDetails, skipTooltip, waitTooltip } from "./details.js";
import { memoryChartSvg } from "./memory-chart.js";
import { type SortKey, sortedRows, tableBody, tableHead } from "./steps-table.js";
import { esc } from "./text.js";
import { LANE_H, type Layout, layout, timelineSvg } from "./timeline.js";

const $ = <T extends HTMLElement>(id: string): T => document.getElementById(id) as T;

const model: ReportModel = unpackModel(JSON.parse($("report-data").textContent ?? "{}") as PackedModel);
let zoom = 1;
let sortKey: SortKey = "order";
let selected: number | null = null;
let current: Layout;

function draw(): void {
  const box = $("timeline");
  const labels = $("tl-labels");
  const width = Math.max(400, Math.floor((box.clientWidth - labels.clientWidth - 2) * zoom));
  current = layout(model, width);
  labels.innerHTML = current.labels
    .map(
      (l) =>
        `<div class="lbl ${l.kind}${l.first ? " first" : ""}" style="height:${l.h}px" title="${esc(l.text)}">${esc(l.text)}</div>`,
    )
    .join("");
  labels.style.paddingTop = `${current.labels[0]?.y ?? 0}px`;
  $("tl-plot").innerHTML = timelineSvg(model, current);
  $("memory-charts").innerHTML = model.memory.length
    ? model.memory
        .map(
          (s) =>
            `<div class="mem-row"><div class="mem-name" style="width:${labels.clientWidth}px">${esc(s.gpu)}</div><div class="mem-plot">${memoryChartSvg(s, current.x, width, model.axis.spanMs)}</div></div>`,
        )
        .join("")
    : `<p class="none">${model.header.kind === "run" ? "No memory readings in this run (no GPU readings, or an old run)." : "No GPU memory is reserved: every pipeline runs on the CPU."}</p>`;
  markSelection();
}

/**
 * The table shows only the rows in view (and a margin), between two spacer rows of the height
 * of the rest: 5,000 rows cost what 60 do. Rows have a fixed height for it (the style sheet's).
 */
const ROW_H = 21;
const MARGIN_ROWS = 30;
let order: number[] = [];
let shown = "";

function drawTable(): void {
  $("steps-head").innerHTML = tableHead(model, sortKey);
  order = sortedRows(model, sortKey);
  shown = "";
  drawRows();
}

function drawRows(): void {
  const wrap = $("steps-wrap");
  const first = Math.max(0, Math.floor(wrap.scrollTop / ROW_H) - MARGIN_ROWS);
  const last = Math.min(order.length, Math.ceil((wrap.scrollTop + wrap.clientHeight) / ROW_H) + MARGIN_ROWS);
  const key = `${first}:${last}`;
  if (key === shown) return;
  shown = key;
  const columns = $("steps-head").querySelectorAll("th").length;
  const spacer = (rows: number) =>
    rows > 0 ? `<tr class="spacer" style="height:${rows * ROW_H}px"><td colspan="${columns}"></td></tr>` : "";
  $("steps-body").innerHTML =
    spacer(first) + tableBody(model, order.slice(first, last)) + spacer(order.length - last);
  markSelection();
}

/** Scroll the table to a row (in the current order) and draw it. */
function showRow(row: number): void {
  const at = order.indexOf(row);
  if (at < 0) return;
  const wrap = $("steps-wrap");
  if (at * ROW_H < wrap.scrollTop || (at + 1) * ROW_H > wrap.scrollTop + wrap.clientHeight)
    wrap.scrollTop = Math.max(0, at * ROW_H - wrap.clientHeight / 2);
  drawRows();
}

function markSelection(): void {
  for (const el of document.querySelectorAll(".sel")) el.classList.remove("sel");
  if (selected === null) return;
  const row = model.rows[selected];
  for (const b of row?.bars ?? []) document.querySelector(`.bar[data-i="${b}"]`)?.classList.add("sel");
  document.querySelector(`tr[data-row="${selected}"]`)?.classList.add("sel");
}

function showDetails(html: string): void {
  const panel = $("details");
  $("details-body").innerHTML = html;
  panel.hidden = false;
}

function select(row: number, bar: number | null, scroll: boolean): void {
  selected = row;
  if (!scroll) showRow(row);
  markSelection();
  showDetails(bar !== null ? barDetails(model, bar) : rowDetails(model, row));
  const b = bar ?? model.rows[row]?.bars.at(-1);
  if (scroll && b !== undefined) {
    const bb = model.bars[b]!;
    const scroller = $("tl-scroll");
    scroller.scrollLeft = Math.max(0, current.x(bb.start) - scroller.clientWidth / 3);
    $("timeline").scrollIntoView({ block: "nearest" });
  }
}

function tooltipFor(target: Element): string | null {
  const el = target.closest("[data-i],[data-h],[data-w],[data-s],[data-q]");
  if (!el) return null;
  const d = (el as SVGElement).dataset;
  if (d.i !== undefined) return barTooltip(model, Number(d.i));
  if (d.h !== undefined) return holdTooltip(model, Number(d.h));
  if (d.w !== undefined) return waitTooltip(model, Number(d.w));
  if (d.s !== undefined) return skipTooltip(model, Number(d.s));
  if (d.q !== undefined)
    return `<div class="tt-title">${esc(d.q)}</div><div>pipelines waiting for a slot</div>`;
  return null;
}

function wire(): void {
  const tip = $("tip");
  const plot = $("tl-plot");
  plot.addEventListener("mousemove", (e) => {
    const html = tooltipFor(e.target as Element);
    if (!html) {
      tip.hidden = true;
      return;
    }
    tip.innerHTML = html;
    tip.hidden = false;
    const x = Math.min(e.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
    const y =
      e.clientY + 16 + tip.offsetHeight > window.innerHeight
        ? e.clientY - tip.offsetHeight - 10
        : e.clientY + 16;
    tip.style.left = `${Math.max(4, x)}px`;
    tip.style.top = `${Math.max(4, y)}px`;
  });
  plot.addEventListener("mouseleave", () => {
    tip.hidden = true;
  });
  plot.addEventListener("click", (e) => {
    const el = (e.target as Element).closest("[data-i]") as SVGElement | null;
    if (!el) return;
    const i = Number(el.dataset.i);
    select(model.bars[i]!.row, i, false);
  });
  $("steps-head").addEventListener("click", (e) => {
    const b = (e.target as Element).closest("button[data-sort]") as HTMLButtonElement | null;
    if (!b) return;
    sortKey = b.dataset.sort as SortKey;
    drawTable();
    markSelection();
  });
  let scrolling = 0;
  $("steps-wrap").addEventListener("scroll", () => {
    cancelAnimationFrame(scrolling);
    scrolling = requestAnimationFrame(drawRows);
  });
  $("steps-body").addEventListener("click", (e) => {
    const tr = (e.target as Element).closest("tr[data-row]") as HTMLTableRowElement | null;
    if (tr) select(Number(tr.dataset.row), null, true);
  });
  $("details").addEventListener("click", (e) => {
    const a = (e.target as Element).closest("[data-goto]") as HTMLElement | null;
    if (a) {
      e.preventDefault();
      const i = Number(a.dataset.goto);
      select(model.bars[i]!.row, i, true);
    }
    if ((e.target as Element).closest(".close")) $("details").hidden = true;
  });
  document.addEventListener("keydown", (e) => {
    if (e.key === "Escape") $("details").hidden = true;
  });
  const planToggle = document.getElementById("show-plan") as HTMLInputElement | null;
  planToggle?.addEventListener("change", () => {
    $("timeline").classList.toggle("no-plan", !planToggle.checked);
  });
  for (const b of document.querySelectorAll<HTMLButtonElement>("button[data-zoom]")) {
    b.addEventListener("click", () => {
      const z = b.dataset.zoom;
      zoom = z === "fit" ? 1 : Math.min(64, Math.max(1, zoom * Number(z)));
      $("zoom-level").textContent = `${zoom}×`;
      draw();
    });
  }
  let resize = 0;
  window.addEventListener("resize", () => {
    cancelAnimationFrame(resize);
    resize = requestAnimationFrame(draw);
  });
}

performance.mark("report:parsed");
draw();
performance.mark("report:drawn");
drawTable();
performance.mark("report:table");
wire();
document.documentElement.style.setProperty("--lane-h", `${LANE_H}px`);
performance.mark("report:rendered");
requestAnimationFrame(() =>
  setTimeout(() => {
    performance.mark("report:painted");
    document.documentElement.dataset.ready = "1";
  }, 0),
);
