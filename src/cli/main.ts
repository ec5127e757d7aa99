/**
 * The CLI's entry: settle stdout and stderr, read the command line (program.ts), and make sure
 * that whatever fails is printed once, with its code, in the format that was asked for.
 */
import { CommanderError } from "@commander-js/extra-typings";
import { createProgram, USER_SETTINGS } from "./program.js";
import type { ReportFormat } from "./report-failure.js";
import { reportFailure } from "./run-command.js";
import { endByHangupWhenTerminalGone } from "./terminal-hangup.js";

// An empty GPUPLAN_* setting means "not set", as it always has; commander would take "" as a value.
for (const name of USER_SETTINGS) if (process.env[name] === "") delete process.env[name];

endByHangupWhenTerminalGone();

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
 * How the command line wants its failures reported, read from the raw arguments: a bad flag stops
 * commander before it has parsed the rest, and the report must still be JSON for the program that
 * reads it — `compile --format json|github` (or `--json`) in its own report, another command's
 * `--json` as a gpuplan/error@1 document. `run --json` without --dry-run or --detach prints the
 * run's events as JSON Lines, where a line that is not an event has no place: its failures are
 * said on stderr only.
 */
function requestedReportFormat(args: readonly string[]): ReportFormat {
  const end = args.indexOf("--");
  const flags = end === -1 ? args : args.slice(0, end);
  const command = flags.find((a) => !a.startsWith("-"));
  if (command === "compile") return compileReportFormat(flags);
  const json = flags.some((a, i) => a === "--json" || (command === "run" && isUiJson(flags, i)));
  if (!json) return "human";
  if (command === "run" && !flags.some((a) => a === "--dry-run" || a === "--detach")) return "human";
  return "error-json";
}

// A declaration, not a const: main() runs above, before a const here would be set.
function isUiJson(flags: readonly string[], i: number): boolean {
  return flags[i] === "--ui=json" || (flags[i] === "--ui" && flags[i + 1] === "json");
}

function compileReportFormat(flags: readonly string[]): ReportFormat {
  let format: ReportFormat = "human";
  for (let i = 0; i < flags.length; i++) {
    const a = flags[i]!;
    const value = a === "--format" ? flags[i + 1] : a.startsWith("--format=") ? a.slice(9) : undefined;
    if (a === "--json" || value === "json") format = "json";
    else if (value === "github") format = "github";
  }
  return format;
}
