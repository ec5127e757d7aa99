/**
 * The CLI's entry: settle stdout and stderr, read the command line (program.ts), and make sure
 * that whatever fails is printed once, with its code, in the format that was asked for.
 */
import { CommanderError } from "@commander-js/extra-typings";
import { createProgram, USER_SETTINGS } from "./program.js";
import type { ReportFormat } from "./report-failure.js";
import { reportFailure } from "./run-command.js";

// An empty GPUPLAN_* setting means "not set", as it always has; commander would take "" as a value.
for (const name of USER_SETTINGS) if (process.env[name] === "") delete process.env[name];

// No top-level await: the bundle is CommonJS (scripts/bundle.mjs), which has none.
void main(requestedReportFormat(process.argv.slice(2)));

async function main(format: ReportFormat): Promise<void> {
  try {
    await createProgram(format, process.argv.slice(2)).parseAsync(process.argv);
  } catch (e) {
    // --help, --version: exit 0; `gpuplan` alone has printed the help on stderr.
    if (e instanceof CommanderError) process.exitCode = e.exitCode === 0 ? 0 : 2;
    else process.exitCode = await reportFailure(e, format);
  }
}

/**
 * How `compile --format json|github` (or `--json`) wants its failures reported, read from the raw
 * arguments: a bad flag stops commander before it has parsed the rest, and the report must still
 * be JSON for the program that reads it.
 */
function requestedReportFormat(args: readonly string[]): ReportFormat {
  if (args.find((a) => !a.startsWith("-")) !== "compile") return "human";
  let format: ReportFormat = "human";
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === "--") break;
    const value = a === "--format" ? args[i + 1] : a.startsWith("--format=") ? a.slice(9) : undefined;
    if (a === "--json" || value === "json") format = "json";
    else if (value === "github") format = "github";
  }
  return format;
}
