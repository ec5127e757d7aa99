/**
 * `gpuplan detect`: print what GPUs and CPU this machine has (a table, or the inventory JSON
 * with --json) and optionally save the inventory for `compile --inventory`. Exit 0 whenever
 * detection ran, even with no GPU; bad flags are UsageErrors (exit 2).
 */
import { detect } from "../../detect/index.js";
import type { Code } from "../../problems/codes.js";
import { jsonText } from "../../text/json-text.js";
import { escapeText } from "../../text/safe-text.js";
import { formatInventory } from "../../ui/detect-table.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";
import { isStdoutPath, writeUserFile } from "../write-file.js";

export interface DetectCommandOptions {
  json?: boolean;
  save?: string;
  all?: boolean;
  /** Parsed and bounded by the CLI (arg-parsers.ts). */
  timeout: number;
  /** Where the GPU slot lock is: its holders are gpuplan's processes on the GPUs. */
  lockDir: string;
}

/** Run `gpuplan detect` with its parsed flags; returns the exit code. */
export default async function detectCommand(options: DetectCommandOptions): Promise<number> {
  const { inventory, visibilityNotes } = await detect({
    all: options.all ?? false,
    timeoutMs: options.timeout,
    lockDir: options.lockDir,
  });
  const json = `${jsonText(inventory, 2)}\n`;
  // `--save -` (or /dev/stdout): the inventory is stdout's one result, as `compile -o -` has it.
  // It wrote a file named `-`, and /dev/stdout got the JSON beside the table or a second copy.
  const toStdout = options.save !== undefined && isStdoutPath(options.save);
  if (options.save && !toStdout) await writeUserFile(options.save, json, "inventory");
  if (options.json || toStdout) {
    writeOut(json);
    // stdout is the machine's; a person still needs to hear that a probe failed.
    for (const p of inventory.probes) {
      if (p.status === "error" || p.status === "timeout") {
        const code: Code = p.status === "error" ? "probe-error" : "probe-timeout";
        writeErr(
          `gpuplan: warning: ${escapeText(p.name)} ${p.status}: ${escapeText(p.message)}  [${code}]${p.hint ? `\n  hint: ${escapeText(p.hint)}` : ""}\n`,
        );
      }
    }
  } else {
    // The table is the result, so it goes to stdout: colour when stdout is a terminal.
    writeOut(formatInventory(inventory, visibilityNotes, await paintFor("stdout")));
  }
  return 0;
}
