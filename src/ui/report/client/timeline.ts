/**
 * The timeline: one row per GPU slot (grouped by GPU, with a row for the pipelines waiting for
 * that GPU when any did) and one per host lane; one bar per attempt. Drawn as one SVG string (a
 * 5,000-bar timeline is one parse, not 5,000 DOM calls); bars carry their index for the tooltip.
 */
import type { ReportModel } from "../../../report/model.js";
import { dur, esc } from "./text.js";
import { ticks } from "./ticks.js";

export const LANE_H = 18;
const QUEUE_H = 16;
const AXIS_H = 22;
const BAR_H = 12;

export interface Layout {
  width: number;
  height: number;
  x: (t: number) => number;
  /** Row top of each lane. */
  laneY: number[];
  /** Row top of each GPU's queue row. */
  queueY: Map<string, number>;
  /** Labels, top to bottom. */
  labels: { y: number; h: number; text: string; kind: string; first: boolean }[];
}

export function layout(model: ReportModel, width: number): Layout {
  const span = Math.max(1, model.axis.spanMs);
  const usable = Math.max(100, width - 8);
  const laneY = new Array<number>(model.lanes.length).fill(0);
  const queueY = new Map<string, number>();
  const labels: Layout["labels"] = [];
  const queues = new Map(model.queues.map((q) => [q.gpu, q]));
  let y = AXIS_H;
  let lastGpu: string | null | undefined;
  const order = model.lanes.map((_, i) => i);
  order.forEach((i, n) => {
    const lane = model.lanes[i]!;
    const first =
      lane.gpu !== lastGpu || (lane.kind === "host" && n > 0 && model.lanes[order[n - 1]!]!.kind !== "host");
    laneY[i] = y;
    labels.push({ y, h: LANE_H, text: lane.label, kind: lane.kind, first });
    y += LANE_H;
    lastGpu = lane.gpu;
    const next = model.lanes[order[n + 1] ?? -1];
    const q = lane.gpu ? queues.get(lane.gpu) : undefined;
    if (q && lane.kind === "slot" && next?.gpu !== lane.gpu) {
      queueY.set(lane.gpu!, y);
      labels.push({ y, h: QUEUE_H, text: `${lane.gpu} waiting (≤ ${q.max})`, kind: "queue", first: false });
      y += QUEUE_H;
    }
  });
  return { width, height: y + 4, x: (t) => 4 + (t / span) * usable, laneY, queueY, labels };
}

export function timelineSvg(model: ReportModel, L: Layout): string {
  const out: string[] = [];
  const w = L.width;
  out.push(
    `<svg xmlns="http://www.w3.org/2000/svg" class="tl-svg" width="${w}" height="${L.height}" viewBox="0 0 ${w} ${L.height}">`,
  );
  out.push(
    '<defs><pattern id="hatch" width="6" height="6" patternUnits="userSpaceOnUse" patternTransform="rotate(45)"><rect width="3" height="6" fill="#b0b7c3"/></pattern>',
    '<pattern id="hatch-x" width="5" height="5" patternUnits="userSpaceOnUse" patternTransform="rotate(-45)"><rect width="2" height="5" fill="#9c6fc4"/></pattern>',
    '<pattern id="host" width="4" height="4" patternUnits="userSpaceOnUse"><rect width="4" height="4" fill="#fff" fill-opacity=".35"/><rect width="2" height="2" fill="#fff" fill-opacity=".5"/></pattern></defs>',
  );
  // Row backgrounds and group separators.
  L.labels.forEach((r, i) => {
    out.push(
      `<rect class="row ${r.kind}${i % 2 ? " odd" : ""}" x="0" y="${r.y}" width="${w}" height="${r.h}"/>`,
    );
    if (r.first) out.push(`<line class="sep" x1="0" x2="${w}" y1="${r.y}" y2="${r.y}"/>`);
  });
  out.push(axisSvg(model, L));
  // Slots held, under everything: idle time in a slot shows as a strip with no bar above it.
  for (let i = 0; i < model.holds.length; i++) {
    const h = model.holds[i]!;
    const x = L.x(h.start);
    const y = L.laneY[h.lane]!;
    const cls = h.kind === "exclusive" ? "hold excl" : "hold";
    const hh = h.kind === "exclusive" ? LANE_H - 4 : 3;
    const yy = h.kind === "exclusive" ? y + 2 : y + LANE_H - 4;
    out.push(
      `<rect class="${cls}" data-h="${i}" x="${x.toFixed(1)}" y="${yy}" width="${Math.max(1, L.x(h.end) - x).toFixed(1)}" height="${hh}"/>`,
    );
  }
  // The plan's bars are one path (no tooltip of their own: a bar's details give its plan), which
  // keeps a 5,000-step page at one element for them instead of 5,000.
  const planned = model.planned.map((p) => {
    const x = L.x(p.start);
    return `M${x.toFixed(1)} ${L.laneY[p.lane]! + 1}h${Math.max(1, L.x(p.end) - x).toFixed(1)}v${LANE_H - 2}H${x.toFixed(1)}Z`;
  });
  if (planned.length)
    out.push(`<g class="planned-layer"><path class="planned" d="${planned.join("")}"/></g>`);
  for (let i = 0; i < model.waits.length; i++) {
    const wt = model.waits[i]!;
    const x = L.x(wt.start);
    out.push(
      `<rect class="wait" data-w="${i}" x="${x.toFixed(1)}" y="${L.laneY[wt.lane]! + 3}" width="${Math.max(1, L.x(wt.end) - x).toFixed(1)}" height="${BAR_H}"/>`,
    );
  }
  const hostFill: string[] = [];
  out.push('<g class="bars">');
  for (let i = 0; i < model.bars.length; i++) {
    const b = model.bars[i]!;
    const x = L.x(b.start);
    const bw = Math.max(1.5, L.x(b.end) - x);
    const y = L.laneY[b.lane]! + 3;
    const mode = model.header.kind === "plan" ? ` k-${b.device === "cpu" ? "cpu" : "gpu"}` : "";
    out.push(
      `<rect class="bar o-${b.outcome}${b.onHost ? " on-host" : ""}${mode}" data-i="${i}" data-step="${esc(`${model.pipelines[model.rows[b.row]!.pipeline]}/${model.rows[b.row]!.step}`)}" x="${x.toFixed(1)}" y="${y}" width="${bw.toFixed(1)}" height="${BAR_H}"/>`,
    );
    if (b.onHost) hostFill.push(`M${x.toFixed(1)} ${y}h${bw.toFixed(1)}v${BAR_H}H${x.toFixed(1)}Z`);
    if (b.load) {
      const lx = L.x(b.load[0]);
      out.push(
        `<rect class="load" data-i="${i}" x="${lx.toFixed(1)}" y="${y}" width="${Math.max(1, L.x(b.load[1]) - lx).toFixed(1)}" height="${BAR_H}"/>`,
      );
    }
    if (b.reused)
      out.push(
        `<circle class="reuse" data-i="${i}" cx="${(x + 3).toFixed(1)}" cy="${y + BAR_H / 2}" r="2.5"/>`,
      );
  }
  out.push("</g>");
  if (hostFill.length) out.push(`<path class="host-fill" d="${hostFill.join("")}" fill="url(#host)"/>`);
  for (let i = 0; i < model.skips.length; i++) {
    const s = model.skips[i]!;
    if (s.lane === null) continue;
    const x = L.x(s.at);
    const cy = L.laneY[s.lane]! + LANE_H / 2;
    out.push(
      `<path class="skip c-${esc(s.cause)}" data-s="${i}" d="M${(x - 4).toFixed(1)} ${cy}l4 -4l4 4l-4 4z"/>`,
    );
  }
  for (const q of model.queues) {
    const top = L.queueY.get(q.gpu);
    if (top === undefined || q.max === 0) continue;
    const yOf = (n: number) => top + QUEUE_H - 1 - (n / q.max) * (QUEUE_H - 3);
    let d = `M${L.x(q.points[0]?.[0] ?? 0).toFixed(1)} ${yOf(0).toFixed(1)}`;
    let prev = 0;
    for (const [t, n] of q.points) {
      const x = L.x(t).toFixed(1);
      d += `L${x} ${yOf(prev).toFixed(1)}L${x} ${yOf(n).toFixed(1)}`;
      prev = n;
    }
    d += "Z";
    out.push(`<path class="queue" data-q="${esc(q.gpu)}" d="${d}"/>`);
  }
  for (const b of model.axis.breaks) {
    const x = L.x(b.at);
    out.push(
      `<line class="break" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${AXIS_H - 6}" y2="${L.height}"/>`,
    );
    out.push(
      `<text class="break-label" x="${(x + 3).toFixed(1)}" y="${AXIS_H - 8}">paused ${esc(dur(b.pausedMs))}</text>`,
    );
  }
  out.push("</svg>");
  return out.join("");
}

/** Ticks at a round step that gives ~one every 90 px, a bounded number of them (ticks.ts). */
function axisSvg(model: ReportModel, L: Layout): string {
  const out: string[] = [
    `<g class="axis"><line x1="0" x2="${L.width}" y1="${AXIS_H - 1}" y2="${AXIS_H - 1}"/>`,
  ];
  const breaks = model.axis.breaks.map((b) => L.x(b.at));
  for (const t of ticks(model.axis.spanMs, L.width)) {
    const x = L.x(t);
    out.push(
      `<line class="tick" x1="${x.toFixed(1)}" x2="${x.toFixed(1)}" y1="${AXIS_H - 5}" y2="${L.height}"/>`,
    );
    // A break's label ("paused 3h") takes the place of the tick labels it would cover.
    if (breaks.some((b) => x > b - 40 && x < b + 90)) continue;
    out.push(`<text x="${(x + 2).toFixed(1)}" y="${AXIS_H - 8}">${esc(t === 0 ? "0" : dur(t))}</text>`);
  }
  out.push("</g>");
  return out.join("");
}
