/** Problems for a person: `file:line:col  severity  message [code]`, a code frame, a hint. */

import type { Problem } from "../../problems/problem.js";
import { codeFrame, FrameText } from "../../source/code-frame.js";
import type { SourceFile } from "../../source/source-file.js";
import { displayCut, escapeText } from "../../text/safe-text.js";
import { noPaint, type Paint } from "../paint.js";

/** Problems shown in full; past this, one line counts the rest by code (a file can have thousands). */
const SHOWN_IN_FULL = 50;

interface HumanOptions {
  /** How many problems to show in full (default SHOWN_IN_FULL). */
  limit?: number;
  /** How the command shows all of them, e.g. `--format json`: said on the line that counts the rest. */
  seeAll?: string;
}

export function formatHuman(
  problems: readonly Problem[],
  sources: readonly SourceFile[],
  paint: Paint = noPaint,
  { limit = SHOWN_IN_FULL, seeAll }: HumanOptions = {},
): string {
  const out: string[] = [];
  // One per file: many problems on one long line look for its ends once.
  const framesOf = new Map<SourceFile, FrameText>();
  const { shown, left } = pickShown(problems, limit);
  for (const p of shown) {
    // File names, messages and hints quote the user's input (keys, values, paths): escaped, and
    // one line each, so a newline in a name cannot forge a `file:line:col  error` line of its own.
    const where = p.file
      ? `${escapeText(p.file)}${p.line !== undefined ? `:${p.line}:${p.column}` : ""}`
      : "";
    const sev = p.severity === "error" ? paint.red(paint.bold("error")) : paint.yellow(paint.bold("warning"));
    out.push(
      `${where ? `${paint.bold(where)}  ` : ""}${sev}  ${quotedCut(p.message)}  ${paint.dim(`[${p.code}]`)}`,
    );
    const source = sources.find((s) => s.file === p.file);
    if (source && p.line !== undefined && p.column !== undefined) {
      const mark = p.severity === "error" ? paint.red : paint.yellow;
      let text = framesOf.get(source);
      if (!text) {
        text = new FrameText(source.text);
        framesOf.set(source, text);
      }
      const at = { line: p.line, column: p.column, ...(p.offset !== undefined && { offset: p.offset }) };
      out.push(indent(codeFrame(text, at, { dim: paint.dim, mark })));
    }
    if (p.hint) out.push(`  ${paint.cyan("hint:")} ${quotedCut(p.hint)}`);
    out.push("");
  }
  if (left.length > 0) out.push(paint.dim(leftOutLine(left, seeAll)), "");
  return out.join("\n");
}

/** A quoted piece of the input longer than this is shown cut, as long names are. */
const LONG_QUOTE = 256;

/**
 * A message or hint escaped, each long `quoted` piece of the input cut as names are (its first
 * 200 and last 40 characters): a 10 MB unknown key printed 10 MB of stderr. --format json keeps
 * the text whole. Found by indexOf, not a regular expression (a 10 MB match overflows its stack).
 */
function quotedCut(text: string): string {
  if (text.length <= LONG_QUOTE) return escapeText(text);
  let out = "";
  let from = 0;
  for (let open = text.indexOf("`"); open !== -1; ) {
    const close = text.indexOf("`", open + 1);
    if (close === -1) break;
    if (close - open - 1 > LONG_QUOTE) {
      out += `${escapeText(text.slice(from, open))}\`${displayCut(text.slice(open + 1, close))}\``;
      from = close + 1;
    }
    open = text.indexOf("`", close + 1);
  }
  return out + escapeText(text.slice(from));
}

/**
 * The first `limit` problems in their order, errors before warnings: fifty warnings at the top
 * of a file must not push its errors out of sight. The rest are only counted.
 */
function pickShown(problems: readonly Problem[], limit: number): { shown: Problem[]; left: Problem[] } {
  if (problems.length <= limit) return { shown: [...problems], left: [] };
  const errors = problems.filter((p) => p.severity === "error").length;
  let errorSlots = Math.min(limit, errors);
  let warningSlots = limit - errorSlots;
  const shown: Problem[] = [];
  const left: Problem[] = [];
  for (const p of problems) {
    const isError = p.severity === "error";
    if (isError ? errorSlots > 0 : warningSlots > 0) {
      shown.push(p);
      if (isError) errorSlots--;
      else warningSlots--;
    } else left.push(p);
  }
  return { shown, left };
}

/** `… 2,950 more not shown (2,950 errors): 2,950 schema-unknown-property; --format json lists them all` */
function leftOutLine(left: readonly Problem[], seeAll: string | undefined): string {
  const byCode = new Map<string, number>();
  for (const p of left) byCode.set(p.code, (byCode.get(p.code) ?? 0) + 1);
  const codes = [...byCode].sort(([a, m], [b, n]) => n - m || (a < b ? -1 : a > b ? 1 : 0));
  const listed = codes.slice(0, 5).map(([code, n]) => `${count(n)} ${code}`);
  if (codes.length > 5) listed.push(`${count(codes.length - 5)} other codes`);
  const errors = left.filter((p) => p.severity === "error").length;
  const kinds = [
    ...(errors > 0 ? [`${count(errors)} error${errors === 1 ? "" : "s"}`] : []),
    ...(left.length > errors
      ? [`${count(left.length - errors)} warning${left.length - errors === 1 ? "" : "s"}`]
      : []),
  ];
  const see = seeAll === undefined ? "" : `; ${seeAll} lists them all`;
  return `… ${count(left.length)} more not shown (${kinds.join(", ")}): ${listed.join(", ")}${see}`;
}

const count = (n: number): string => n.toLocaleString("en-US");

const indent = (text: string): string =>
  text
    .split("\n")
    .map((l) => `  ${l}`)
    .join("\n");

export function countLine(problems: readonly Problem[]): string {
  const errors = problems.filter((p) => p.severity === "error").length;
  const warnings = problems.length - errors;
  const plural = (n: number, w: string) => `${n} ${w}${n === 1 ? "" : "s"}`;
  return `${plural(errors, "error")}, ${plural(warnings, "warning")}`;
}
