/**
 * Memory over time, one small chart per GPU (and one for host memory) on the timeline's time
 * axis: used memory from the readings (a run) or the memory the plan's pipelines reserve (a plan),
 * with the GPU's budget as a dashed line and its total as the top.
 */
import type { MemorySeries } from "../../../report/model.js";
import { esc, size } from "./text.js";

const H = 74;
const PAD_TOP = 12;

export function memoryChartSvg(
  s: MemorySeries,
  x: (t: number) => number,
  width: number,
  endT: number,
): string {
  const top = Math.max(1, s.totalBytes ?? 0, s.budgetBytes ?? 0, ...s.points.map((p) => p[1]));
  const y = (bytes: number) => PAD_TOP + (H - PAD_TOP - 2) * (1 - bytes / top);
  const out: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" class="mem-svg" width="${width}" height="${H}" viewBox="0 0 ${width} ${H}">`,
    `<rect class="mem-bg" x="0" y="0" width="${width}" height="${H}"/>`,
  ];
  if (s.totalBytes)
    out.push(
      `<line class="mem-total" x1="0" x2="${width}" y1="${y(s.totalBytes).toFixed(1)}" y2="${y(s.totalBytes).toFixed(1)}"/>`,
    );
  let d = "";
  if (s.kind === "reserved") {
    // A step function: what is reserved holds until the next change.
    let prev = 0;
    d = `M${x(s.points[0]?.[0] ?? 0).toFixed(1)} ${y(0).toFixed(1)}`;
    for (const [t, v] of s.points) {
      d += `L${x(t).toFixed(1)} ${y(prev).toFixed(1)}L${x(t).toFixed(1)} ${y(v).toFixed(1)}`;
      prev = v;
    }
    d += `L${x(endT).toFixed(1)} ${y(prev).toFixed(1)}L${x(endT).toFixed(1)} ${y(0).toFixed(1)}Z`;
  } else {
    d = s.points.map(([t, v], i) => `${i ? "L" : "M"}${x(t).toFixed(1)} ${y(v).toFixed(1)}`).join("");
  }
  out.push(`<path class="mem-series ${s.kind}" data-gpu="${esc(s.gpu)}" d="${d}"/>`);
  if (s.kind === "used")
    for (const [t, v] of s.points.length <= 400 ? s.points : [])
      out.push(`<circle class="mem-dot" cx="${x(t).toFixed(1)}" cy="${y(v).toFixed(1)}" r="1.6"/>`);
  if (s.budgetBytes !== null) {
    const by = y(s.budgetBytes).toFixed(1);
    out.push(
      `<line class="mem-budget" data-gpu="${esc(s.gpu)}" x1="0" x2="${width}" y1="${by}" y2="${by}"/>`,
    );
    out.push(
      `<text class="mem-label budget" x="${width - 4}" y="${(Number(by) - 2).toFixed(1)}" text-anchor="end">budget ${esc(size(s.budgetBytes))}</text>`,
    );
  }
  const peak = Math.max(0, ...s.points.map((p) => p[1]));
  out.push(
    `<text class="mem-label" x="4" y="10">${esc(s.gpu)} · ${esc(s.name)} · ${s.kind === "reserved" ? "reserved" : "used"}, peak ${esc(size(peak))}${s.totalBytes ? ` of ${esc(size(s.totalBytes))}` : ""}</text>`,
  );
  out.push("</svg>");
  return out.join("");
}
