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
    const { code, hint } = ownCodeOf(e);
    process.stderr.write(
      `gpuplan: error: ${plain(messageOf(e))}${code ? `  [${code}]` : ""}\n${hint ? `  hint: ${plain(hint)}\n` : ""}  (the failure could not be reported in full: ${plain(messageOf(loadError))})\n`,
    );
    return 2;
  }
  return reporter.reportFailure(e, format);
}

const messageOf = (e: unknown): string => (e instanceof Error ? e.message : String(e));

/**
 * A gpuplan failure's code (`unwritable-file`: the registry's are lower case, a system error's
 * EMFILE is not) and hint, read off the error rather than by importing its class, which is a
 * chunk of its own: the fallback loads nothing.
 */
function ownCodeOf(e: unknown): { code?: string; hint?: string } {
  if (!(e instanceof Error)) return {};
  const { code, hint } = e as { code?: unknown; hint?: unknown };
  if (typeof code !== "string" || !/^[a-z][a-z0-9-]*$/.test(code)) return {};
  return { code, ...(typeof hint === "string" && { hint }) };
}

// The reporter escapes the outside text in a message (a path, a vendor's string) with
// src/text/safe-text.ts; this fallback must too, without loading anything: the C0 and C1 controls,
// DEL, the bidi controls, and the line separators and zero-width characters, as \xNN or \uNNNN.
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding control characters is the point
const UNSAFE = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;

/** One line, safe for a terminal: what safe-text.ts's escapeText would escape, escaped. */
const plain = (text: string): string =>
  text.replace(UNSAFE, (c) => {
    const code = c.charCodeAt(0);
    return code <= 0xff
      ? `\\x${code.toString(16).padStart(2, "0")}`
      : `\\u${code.toString(16).padStart(4, "0")}`;
  });
