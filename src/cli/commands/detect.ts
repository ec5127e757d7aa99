/**
 * `gpuplan detect`: print what GPUs and CPU this machine has (a table, or the inventory JSON
 * with --json) and optionally save the inventory for `compile --inventory`. Exit 0 whenever
 * detection ran, even with no GPU; bad flags are UsageErrors (exit 2).
 */
import { renameSync, unlinkSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { detect } from "../../detect/index.js";
import { UsageError } from "../../problems/errors.js";
import { formatInventory } from "../../ui/detect-table.js";
import { escapeText } from "../../ui/escape.js";
import { parseDuration } from "../../units/duration.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export interface DetectCommandOptions {
  json?: boolean;
  save?: string;
  all?: boolean;
  timeout?: string;
}

/** Run `gpuplan detect` with its parsed flags; returns the exit code. */
export default async function detectCommand(options: DetectCommandOptions): Promise<number> {
  const timeoutMs = parseDuration(options.timeout ?? "10s");
  if (timeoutMs === undefined || timeoutMs <= 0) {
    throw new UsageError(
      `--timeout ${options.timeout}: not a duration`,
      "invalid-timeout",
      "use e.g. 10s, 30s, 2m or milliseconds",
    );
  }
  const { inventory, visibilityNotes } = await detect({ all: options.all ?? false, timeoutMs });
  const json = `${JSON.stringify(inventory, null, 2)}\n`;
  if (options.save) saveAtomically(options.save, json);
  if (options.json) {
    writeOut(json);
    // stdout is the machine's; a person still needs to hear that a probe failed.
    for (const p of inventory.probes) {
      if (p.status === "error" || p.status === "timeout") {
        writeErr(
          `gpuplan: warning: ${escapeText(p.name)} ${p.status}: ${escapeText(p.message)}${p.hint ? `\n  hint: ${escapeText(p.hint)}` : ""}\n`,
        );
      }
    }
  } else {
    // The table is the result, so it goes to stdout: colour when stdout is a terminal.
    writeOut(formatInventory(inventory, visibilityNotes, await paintFor(process.stdout)));
  }
  return 0;
}

/** Write through a temporary file in the same folder and rename, so readers never see half a file. */
function saveAtomically(file: string, text: string): void {
  const tmp = join(dirname(file), `.${basename(file)}.${process.pid}.tmp`);
  try {
    writeFileSync(tmp, text);
    renameSync(tmp, file);
  } catch (e) {
    try {
      unlinkSync(tmp);
    } catch {}
    const reason = e instanceof Error && "code" in e ? String((e as NodeJS.ErrnoException).code) : String(e);
    throw new UsageError(
      `cannot write ${file} (${reason})`,
      "unwritable-file",
      "check that the folder exists and is writable",
    );
  }
}
