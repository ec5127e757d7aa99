/** Problems for a person: `file:line:col  severity  message [code]`, a code frame, a hint. */

import type { Problem } from "../../problems/problem.js";
import { codeFrame } from "../../source/code-frame.js";
import type { SourceFile } from "../../source/source-file.js";
import { escapeText, needsEscape } from "../../text/safe-text.js";
import { noPaint, type Paint } from "../paint.js";

export function formatHuman(
  problems: readonly Problem[],
  sources: readonly SourceFile[],
  paint: Paint = noPaint,
): string {
  const out: string[] = [];
  const linesOf = new Map<SourceFile, FrameLines>();
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
      let lines = linesOf.get(source);
      if (!lines) {
        lines = frameLines(source.text);
        linesOf.set(source, lines);
      }
      const column = lines.changed.has(p.line - 1)
        ? showSourceLine((lines.raw[p.line - 1] ?? "").slice(0, p.column - 1)).length + 1
        : p.column;
      out.push(indent(codeFrame(lines.shown, p.line, column, { dim: paint.dim, mark })));
    }
    if (p.hint) out.push(`  ${paint.cyan("hint:")} ${escapeText(p.hint)}`);
    out.push("");
  }
  return out.join("\n");
}

/** A file's lines as raw text and as shown in code frames; `changed` holds the indexes that differ. */
interface FrameLines {
  raw: string[];
  shown: string[];
  changed: Set<number>;
}

/** Split once per file (per problem would be quadratic); only lines with tabs or control characters change. */
function frameLines(text: string): FrameLines {
  const raw = text.split(/\r?\n/);
  const changed = new Set<number>();
  const shown = raw.map((line, i) => {
    if (!line.includes("\t") && !needsEscape(line)) return line;
    changed.add(i);
    return showSourceLine(line);
  });
  return { raw, shown, changed };
}

/** A line of the user's file in a code frame: tabs as two spaces, control characters escaped (the caret follows). */
const showSourceLine = (line: string): string => escapeText(line.replaceAll("\t", "  "));

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
