/**
 * The report as one self-contained HTML file: the header written here (every outside string
 * escaped, its bidi and other invisible controls shown as `\u202e` as on a terminal), the model as a JSON script element (`<` written as \u003c, so no text can close it),
 * and the page's script and style inline. A Content-Security-Policy allows no network at all and
 * only the page's own script (by its hash), so even text that escaped escaping could not run.
 */
import { createHash } from "node:crypto";
import { REPORT_CLIENT_JS } from "../../generated/report-client.js";
import type { Counts, Placement, ReportHeader, ReportModel } from "../../report/model.js";
import { countNoun } from "../../text/count-noun.js";
import { escapeForPage } from "../../text/safe-text.js";
import { formatDuration } from "../../units/duration.js";
import { formatSize } from "../../units/size.js";
import { REPORT_CSS } from "./report-css.js";
import { packModel } from "./wire.js";

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};
const esc = (s: unknown): string => escapeForPage(String(s)).replace(/[&<>"']/g, (c) => ENTITIES[c]!);
const dur = (ms: number | null): string => (ms === null ? "–" : formatDuration(ms));

/** JSON that can sit inside a script element: nothing in it can end the element or open a comment. */
function scriptSafeJson(value: unknown): string {
  return JSON.stringify(value)
    .replace(/</g, "\\u003c")
    .replace(/>/g, "\\u003e")
    .replace(/&/g, "\\u0026")
    .replace(/\u2028/g, "\\u2028")
    .replace(/\u2029/g, "\\u2029");
}

export function renderReportHtml(model: ReportModel, version: string): string {
  const h = model.header;
  const scriptHash = createHash("sha256").update(REPORT_CLIENT_JS).digest("base64");
  // Our own words and a base64 hash: nothing in it needs escaping in a double-quoted attribute.
  const csp = `default-src 'none'; style-src 'unsafe-inline'; img-src data:; script-src 'sha256-${scriptHash}'`;
  const title = `gpuplan report — ${h.title}`;
  return `<!doctype html>
<html lang="en">
<head>
<meta charset="utf-8">
<meta http-equiv="Content-Security-Policy" content="${csp}">
<meta name="viewport" content="width=device-width, initial-scale=1">
<meta name="generator" content="gpuplan ${esc(version)}">
<title>${esc(title)}</title>
<style>${REPORT_CSS}</style>
</head>
<body>
<header>
<h1>${esc(title)}</h1>
<p class="sub">${esc(subtitle(h))}</p>
${factsHtml(h)}
${countsHtml(h)}
${makespanHtml(h)}
${h.notes.length ? `<ul class="notes">${h.notes.map((n) => `<li>${esc(n)}</li>`).join("")}</ul>` : ""}
</header>
<section>
<h2>${h.kind === "plan" ? "Planned timeline" : "Timeline"}</h2>
${legendHtml(model)}
<div class="controls">zoom <button type="button" data-zoom="0.5">−</button><span id="zoom-level">1×</span><button type="button" data-zoom="2">+</button><button type="button" data-zoom="fit">fit</button>${
    h.kind === "run" && model.planned.length
      ? '<label><input type="checkbox" id="show-plan" checked> the plan\'s estimates (dashed)</label>'
      : ""
  }</div>
<div id="timeline"><div id="tl-labels"></div><div id="tl-scroll"><div id="tl-plot"></div></div></div>
</section>
<section>
<h2>${h.kind === "plan" ? "GPU memory reserved" : "Memory over time"}</h2>
<div id="memory-charts"></div>
</section>
${model.placements.length ? placementHtml(model) : ""}
<section>
<h2>Steps</h2>
<div class="table-wrap" id="steps-wrap"><table class="steps"><thead id="steps-head"></thead><tbody id="steps-body"></tbody></table></div>
</section>
<footer>gpuplan ${esc(version)} · one file, no network: it opens from disk anywhere.</footer>
<aside id="details" hidden><button type="button" class="close" title="close (Esc)">✕</button><div id="details-body"></div></aside>
<div id="tip" hidden></div>
<script type="application/json" id="report-data">${scriptSafeJson(packModel(model))}</script>
<script>${REPORT_CLIENT_JS}</script>
</body>
</html>
`;
}

function subtitle(h: ReportHeader): string {
  const parts = [];
  if (h.planName) parts.push(`plan ${h.planName}`);
  if (h.pipelineFile) parts.push(`from ${h.pipelineFile}`);
  if (h.kind === "run") parts.push(h.status);
  return parts.join(" · ");
}

function fact(label: string, valueHtml: string): string {
  return `<div class="fact"><span class="k">${esc(label)}</span><span class="v">${valueHtml}</span></div>`;
}

function factsHtml(h: ReportHeader): string {
  const rows = [
    fact("plan", esc(h.planName ?? "unknown")),
    fact("pipeline file", esc(h.pipelineFile ?? "unknown")),
  ];
  if (h.kind === "run") {
    rows.push(
      fact("started from", esc(h.input ?? "unknown")),
      fact("run folder", `<code>${esc(h.runDir ?? "")}</code>`),
      fact("start", esc(h.startedAt ?? "–")),
      fact("end", esc(h.endedAt ?? "–")),
      fact("wall time", esc(dur(h.wallMs))),
      fact("status", esc(h.status)),
      fact("sessions", `${h.sessions}${h.sessions > 1 ? " (resumed)" : ""}`),
    );
  } else {
    rows.push(fact("plan file", esc(h.input ?? "")));
  }
  if (h.maxParallelPipelines !== null)
    rows.push(fact("host lanes", `${countNoun(h.maxParallelPipelines, "pipeline")} at once`));
  const gpus = h.gpus.length
    ? `<ul class="gpus">${h.gpus
        .map(
          (g) =>
            `<li><b>${esc(g.gpu)}</b> ${esc(g.name)}, ${esc(formatSize(g.memoryBytes))} (budget ${esc(formatSize(g.budgetBytes))}), ${g.slots} slot${g.slots === 1 ? "" : "s"} <span class="uuid">${esc(g.uuid)}</span></li>`,
        )
        .join("")}</ul>`
    : "no GPUs (CPU only)";
  return `<div class="facts-grid">${rows.join("")}</div>${fact("machine", gpus)}`;
}

function countsHtml(h: ReportHeader): string {
  const c: Counts = h.counts;
  const chip = (cls: string, n: number, label: string) =>
    n > 0 || cls === "o-ok" ? `<span class="chip ${cls}"><b>${n}</b> ${esc(label)}</span>` : "";
  // The number bold, its noun plain: countNoun's words, so that one step is not "1 steps".
  const counted = (n: number, noun: string) => countNoun(n, noun).replace(/^\d+/, (d) => `<b>${d}</b>`);
  if (h.kind === "plan")
    return `<div class="counts"><span class="chip">${counted(c.steps, "step")}</span></div>`;
  return `<div class="counts">${[
    `<span class="chip">${counted(c.steps, "step")}, ${countNoun(c.attempts, "attempt")}</span>`,
    chip("o-ok", c.ok, "ok"),
    chip("o-failed", c.failed, "failed"),
    chip("o-oom", c.oom, "out of memory"),
    chip("o-timeout", c.timeout, "timed out"),
    chip("o-retried", c.retried, "retried"),
    chip("o-fallback", c.fallback, "fell back to CPU"),
    chip("o-kept", c.kept, "done earlier (skipped on resume)"),
    chip("o-interrupted", c.interrupted, "interrupted"),
    chip("", c.skipped, "skipped"),
    chip("", c.notRun, "not run"),
  ].join("")}</div>`;
}

function makespanHtml(h: ReportHeader): string {
  const ratio = (a: number | null, b: number | null) =>
    a !== null && b !== null && b > 0 ? ` (${(a / b).toFixed(2)}×)` : "";
  if (h.kind === "plan") {
    return `<p class="makespan">Estimated makespan <span class="big">${esc(dur(h.planMakespanMs))}</span> · lower bound ${esc(dur(h.lowerBoundMs))}${esc(ratio(h.planMakespanMs, h.lowerBoundMs))}</p>`;
  }
  return `<p class="makespan">Makespan <span class="big">${esc(dur(h.makespanMs))}</span> actual · ${esc(dur(h.planMakespanMs))} planned${esc(ratio(h.makespanMs, h.planMakespanMs))} · lower bound ${esc(dur(h.lowerBoundMs))}${esc(ratio(h.makespanMs, h.lowerBoundMs))}</p>`;
}

function legendHtml(model: ReportModel): string {
  const sw = (color: string, label: string, extra = "") =>
    `<span><span class="sw" style="background:${color}${extra}"></span>${esc(label)}</span>`;
  if (model.header.kind === "plan") {
    return `<div class="legend">${sw("#7986cb", "GPU step (estimate)")}${sw("#9fb3c8", "host step")}${sw("#8fa3bf", "slot held", ";height:3px")}</div>`;
  }
  return `<div class="legend">${[
    sw("var(--ok)", "ok"),
    sw("var(--failed)", "failed"),
    sw("var(--timeout)", "timed out"),
    sw("var(--oom)", "out of memory"),
    sw("var(--retried)", "retried"),
    sw("var(--fallback)", "fell back to CPU"),
    sw("var(--kept)", "done earlier, skipped on resume"),
    sw("var(--interrupted)", "interrupted"),
    sw("repeating-linear-gradient(45deg,#b0b7c3 0 3px,#fff 3px 6px)", "waiting for the GPU"),
    sw("#f2c94c", "pipelines waiting for a slot"),
    sw("#8fa3bf", "slot held", ";height:3px"),
    sw("rgba(0,0,0,.35)", "warm worker loading"),
    "<span>○ warm worker reused</span>",
    sw("repeating-linear-gradient(90deg,#888 0 2px,#fff 2px 4px)", "host step of a GPU pipeline"),
    model.planned.length ? sw("#fff", "planned", ";border:1px dashed #5c6bc0") : "",
  ].join("")}</div>`;
}

function placementHtml(model: ReportModel): string {
  const row = (p: Placement) =>
    `<tr><td>${esc(model.pipelines[p.pipeline])}</td><td>${esc(p.gpus.join(", ") || "cpu")}</td><td class="n">+${esc(dur(p.startMs))}</td><td class="n">${esc(dur(p.estimateMs))}</td><td class="n">${p.reservationBytes ? esc(formatSize(p.reservationBytes)) : "–"}</td><td>${
      p.note ? `${esc(p.note)}<br>` : ""
    }${p.notOn.map((n) => `<b>${esc(n.gpu)}</b>: ${esc(n.reason)}`).join("<br>")}</td></tr>`;
  return `<section>
<h2>Why each pipeline is where it is</h2>
<div class="table-wrap"><table class="steps placement"><thead><tr><th>pipeline</th><th>GPU</th><th>start</th><th>estimate</th><th>reserves</th><th>not on the other GPUs because</th></tr></thead>
<tbody>${model.placements.map(row).join("")}</tbody></table></div>
</section>`;
}
