/** Problems for a person: `file:line:col  severity  message [code]`, a code frame, a hint. */

import type { Problem } from "../../problems/problem.js";
import { codeFrame, FrameText } from "../../source/code-frame.js";
import type { SourceFile } from "../../source/source-file.js";
import { escapeText } from "../../text/safe-text.js";
import { noPaint, type Paint } from "../paint.js";

export function formatHuman(
  problems: readonly Problem[],
  sources: readonly SourceFile[],
  paint: Paint = noPaint,
): string {
  const out: string[] = [];
  // One per file: many problems on one long line look for its ends once.
  const framesOf = new Map<SourceFile, FrameText>();
  for (const p of problems) {
    // File names, messages and hints quote the user's input (keys, values, paths): escaped, and
    // one line each, so a newline in a name cannot forge a `file:line:col  error` line of its own.
    const where = p.file
      ? `${escapeText(p.file)}${p.line !== undefined ? `:${p.line}:${p.column}` : ""}`
      : "";
    const sev = p.severity === "error" ? paint.red(paint.bold("error")) : paint.yellow(paint.bold("warning"));
    out.push(
      `${where ? `${paint.bold(where)}  ` : ""}${sev}  ${escapeText(p.message)}  ${paint.dim(`[${p.code}]`)}`,
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
    if (p.hint) out.push(`  ${paint.cyan("hint:")} ${escapeText(p.hint)}`);
    out.push("");
  }
  return out.join("\n");
}

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
