/** `gpuplan explain [CODE]`: what a code gpuplan printed means, from the code registry. */
import { CODES, type CodeEntry, isCode } from "../../problems/codes.js";
import { didYouMean } from "../../problems/did-you-mean.js";
import { UsageError } from "../../problems/errors.js";
import { displayText } from "../../text/safe-text.js";
import { writeOut } from "../output.js";

/** The most of an unknown code that is shown back: the longest code has 30 characters. */
const MAX_SHOWN = 64;

const WHO: Record<CodeEntry["actor"], string> = {
  user: "yours to fix",
  vendor: "a vendor library, driver or the system failed",
  bug: "a bug in gpuplan",
};

/** Print one code's explanation, or every code with its title when none is given. */
export default async function explain(code: string | undefined): Promise<number> {
  if (code === undefined) {
    writeOut(listCodes());
    return 0;
  }
  // Accept the code as printed: `[needs-cycle]`.
  const name = code.trim().replace(/^\[(.*)\]$/, "$1");
  if (!isCode(name)) {
    const suggestion = didYouMean(name, Object.keys(CODES));
    // The argument is outside text: a pasted log line of 100,000 characters came back whole.
    throw new UsageError(
      `\`${displayText(name, MAX_SHOWN)}\` is not a gpuplan code`,
      "unknown-code",
      `${suggestion ? `did you mean \`${suggestion}\`? ` : ""}gpuplan explain lists every code`,
    );
  }
  writeOut(explainCode(name, CODES[name]));
  return 0;
}

function explainCode(name: string, entry: CodeEntry): string {
  const kind = entry.kind === "failure" ? "stops the command" : entry.kind;
  const lines = [
    `${name}: ${entry.title}`,
    `  ${kind}; ${WHO[entry.actor]}; exit ${entry.exit}${entry.kind === "warning" ? " (1 with --strict)" : ""}`,
    "",
    ...wrap(entry.explanation, 78),
  ];
  if (entry.hint) lines.push("", ...wrap(`hint: ${entry.hint}`, 78));
  return `${lines.join("\n")}\n`;
}

function listCodes(): string {
  const names = Object.keys(CODES).sort();
  const width = Math.max(...names.map((n) => n.length));
  const rows = names.map((n) => `${n.padEnd(width)}  ${CODES[n as keyof typeof CODES].title}`);
  return `${rows.join("\n")}\n\ngpuplan explain CODE tells more about one.\n`;
}

/** Greedy word wrap; a word longer than the width stays whole. */
function wrap(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = "";
  for (const word of text.split(/\s+/)) {
    if (line && line.length + 1 + word.length > width) {
      lines.push(line);
      line = word;
    } else line = line ? `${line} ${word}` : word;
  }
  if (line) lines.push(line);
  return lines;
}
