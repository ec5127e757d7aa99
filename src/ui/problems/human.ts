/** Problems for a person: `file:line:col  severity  message [code]`, a code frame, a hint. */

import type { Problem } from "../../problems/problem.js";
import { codeFrame } from "../../source/code-frame.js";
import type { SourceFile } from "../../source/source-file.js";
import { createPaint, type Paint } from "../paint.js";

export function formatHuman(
  problems: readonly Problem[],
  sources: readonly SourceFile[],
  paint: Paint = createPaint(false),
): string {
  const out: string[] = [];
  const linesOf = new Map<SourceFile, string[]>();
  for (const p of problems) {
    const where = p.file ? `${p.file}${p.line !== undefined ? `:${p.line}:${p.column}` : ""}` : "";
    const sev = p.severity === "error" ? paint.red(paint.bold("error")) : paint.yellow(paint.bold("warning"));
    out.push(`${where ? `${paint.bold(where)}  ` : ""}${sev}  ${p.message}  ${paint.dim(`[${p.code}]`)}`);
    const source = sources.find((s) => s.file === p.file);
    if (source && p.line !== undefined && p.column !== undefined) {
      const mark = p.severity === "error" ? paint.red : paint.yellow;
      let lines = linesOf.get(source);
      if (!lines) {
        lines = source.text.split(/\r?\n/);
        linesOf.set(source, lines);
      }
      out.push(indent(codeFrame(lines, p.line, p.column, { dim: paint.dim, mark })));
    }
    if (p.hint) out.push(`  ${paint.cyan("hint:")} ${p.hint}`);
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
