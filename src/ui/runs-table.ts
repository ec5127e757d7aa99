/** `gpuplan runs` for a person: the runs newest first, what --prune did, and how to resume the newest that can be. */
import type { PruneResult, RunListing } from "../schema-types/runs.js";
import { escapeText } from "../text/safe-text.js";
import { formatDuration } from "../units/duration.js";
import { formatSize } from "../units/size.js";
import { noPaint, type Paint } from "./paint.js";
import { formatTable } from "./table.js";

const STATUS_STYLE = {
  ok: "green",
  failed: "red",
  interrupted: "yellow",
  unfinished: "yellow",
  submitted: "cyan",
  running: "cyan",
  damaged: "red",
} as const;

/** "2026-11-23 17:39:27Z" from ISO 8601 (seconds are enough to tell runs apart at a glance). */
const when = (iso: string | null): string =>
  iso && /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d/.test(iso) ? `${iso.slice(0, 10)} ${iso.slice(11, 19)}Z` : "–";

export function formatRuns(runs: readonly RunListing[], runsDir: string, paint: Paint = noPaint): string {
  if (runs.length === 0) return `no runs in ${escapeText(runsDir)}\n`;
  const columns = [
    { header: "RUN" },
    { header: "PLAN" },
    { header: "STARTED" },
    { header: "WALL", align: "right" as const },
    { header: "OK", align: "right" as const },
    { header: "FAILED", align: "right" as const },
    { header: "SKIPPED", align: "right" as const },
    { header: "STATUS" },
    { header: "RESUME" },
    { header: "SIZE", align: "right" as const },
  ];
  const rows = runs.map((r) => [
    r.id,
    escapeText(r.plan ?? "?"),
    when(r.startedAt),
    r.wallMs === null ? "–" : formatDuration(r.wallMs),
    String(r.ok),
    r.failed ? paint.red(String(r.failed)) : "0",
    String(r.skipped),
    paint[STATUS_STYLE[r.status]](r.status),
    r.resumable ? "yes" : "–",
    formatSize(r.bytes),
  ]);
  const lines = formatTable(columns, rows, { paint });
  for (const r of runs)
    if (r.problem && r.status !== "ok") lines.push(paint.dim(`${r.id}: ${escapeText(r.problem)}`));
  const next = runs.find((r) => r.resumable);
  if (next?.resume) lines.push(`resume ${next.id}: ${escapeText(next.resume)}`);
  return `${lines.join("\n")}\n`;
}

export function formatPruned(p: PruneResult, runs: readonly RunListing[], paint: Paint = noPaint): string {
  const freed = runs.filter((r) => p.removed.includes(r.id)).reduce((n, r) => n + r.bytes, 0);
  const lines = [
    `${paint.bold("gpuplan runs --prune:")} kept the ${p.keep} newest; removed ${p.removed.length} run${p.removed.length === 1 ? "" : "s"} (${formatSize(freed)})`,
  ];
  if (p.inUse.length)
    lines.push(
      `kept ${p.inUse.length} older run${p.inUse.length === 1 ? "" : "s"} that may be in use: ${p.inUse.join(", ")}`,
    );
  for (const r of p.reasons) lines.push(`kept ${r.id}: ${escapeText(r.reason)}`);
  for (const e of p.errors) lines.push(paint.red(`could not remove ${e.id}: ${escapeText(e.error)}`));
  return `${lines.join("\n")}\n`;
}
