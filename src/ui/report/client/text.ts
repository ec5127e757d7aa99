/**
 * Text for the page: every string from the run (names, argv, stderr, paths) goes through `esc`
 * before it meets markup, its bidi overrides and other invisible controls shown as `\u202e`
 * (escapeForPage): a name must not reverse or hide the text around it. The page's
 * Content-Security-Policy lets only its own script run, so a string that slipped through would
 * still not execute; escaping keeps it from even showing as markup.
 */
import { escapeForPage } from "../../../text/safe-text.js";
import { formatDuration } from "../../../units/duration.js";
import { formatSize } from "../../../units/size.js";

const ENTITIES: Record<string, string> = {
  "&": "&amp;",
  "<": "&lt;",
  ">": "&gt;",
  '"': "&quot;",
  "'": "&#39;",
};

/** Markup-safe, visible text (element content and quoted attribute values alike). */
export const esc = (s: unknown): string => escapeForPage(String(s)).replace(/[&<>"']/g, (c) => ENTITIES[c]!);

export const dur = (ms: number | null | undefined): string =>
  ms === null || ms === undefined ? "–" : formatDuration(ms);
export const size = (bytes: number | null | undefined): string =>
  bytes === null || bytes === undefined ? "–" : formatSize(bytes);

/** An estimate's error as a person reads it: ×2.4 (slower), ÷3.1 (faster), ≈ within 10%. */
export function ratio(r: number | null): string {
  if (r === null || !Number.isFinite(r)) return "–";
  if (r >= 0.9 && r <= 1.1) return `≈ ${r.toFixed(2)}×`;
  return r > 1 ? `×${r.toFixed(r >= 10 ? 0 : 1)} slower` : `÷${(1 / r).toFixed(1 / r >= 10 ? 0 : 1)} faster`;
}

/** A word list as shell words, quoted where a word needs it. */
export function argvText(argv: readonly string[]): string {
  return argv.map((w) => (/^[\w@%+=:,./-]+$/.test(w) ? w : `'${w.replaceAll("'", "'\\''")}'`)).join(" ");
}

export const OUTCOME_TEXT: Record<string, string> = {
  ok: "ok",
  failed: "failed",
  timeout: "timed out",
  oom: "out of memory",
  error: "failed",
  "load-timeout": "worker load timed out",
  retried: "retried",
  fallback: "CPU fallback",
  interrupted: "interrupted",
  kept: "done earlier",
  planned: "planned",
  skipped: "skipped",
  "not-run": "not run",
};
