/**
 * Runs one command module and turns what it returns or throws into an exit code. This is the
 * only place (with main.ts) that decides exit codes; the core never exits.
 */
import type { ReportFormat } from "./report-failure.js";

/** A command module: its default export takes the parsed arguments and returns the exit code. */
export interface CommandModule<A extends unknown[]> {
  default: (...args: A) => Promise<number>;
}

export async function runCommand<A extends unknown[]>(
  format: ReportFormat,
  load: () => Promise<CommandModule<A>>,
  ...args: A
): Promise<void> {
  try {
    const mod = await load();
    process.exitCode = await mod.default(...args);
  } catch (e) {
    process.exitCode = await reportFailure(e, format);
  }
}

/** Print a failure once, in the format asked for; loaded only when something failed. */
export async function reportFailure(e: unknown, format: ReportFormat): Promise<number> {
  let reporter: typeof import("./report-failure.js");
  try {
    reporter = await import("./report-failure.js");
  } catch (loadError) {
    // Out of descriptors (`ulimit -n`), the reporter's own file cannot be opened: the failure is
    // still said, plainly, rather than as Node's stack of the import that failed.
    process.stderr.write(
      `gpuplan: error: ${messageOf(e)}\n  (the failure could not be reported in full: ${messageOf(loadError)})\n`,
    );
    return 2;
  }
  return reporter.reportFailure(e, format);
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));
