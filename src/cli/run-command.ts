/**
 * Runs one command module and turns what it returns or throws into an exit code. This is the
 * only place (with main.ts) that decides exit codes; the core never exits.
 */
import { EXIT, InputProblems, InternalError, UsageError, VendorError } from "../problems/errors.js";
import { writeErr } from "./output.js";

export interface CommandModule {
  // biome-ignore lint/suspicious/noExplicitAny: each command declares its own argument types
  default: (...args: any[]) => Promise<number>;
}

export async function runCommand(load: () => Promise<CommandModule>, ...args: unknown[]): Promise<void> {
  try {
    const mod = await load();
    process.exitCode = await mod.default(...args);
  } catch (e) {
    process.exitCode = reportFailure(e);
  }
}

/** Print a failure for a person, never a stack trace unless it is our bug. */
function reportFailure(e: unknown): number {
  if (e instanceof UsageError) {
    writeErr(`gpuplan: ${e.message}${e.hint ? `\n  hint: ${e.hint}` : ""}\n`);
    return EXIT.usage;
  }
  if (e instanceof InputProblems) {
    for (const p of e.problems) writeErr(`gpuplan: ${p.message}\n`);
    return EXIT.problems;
  }
  if (e instanceof VendorError) {
    writeErr(
      `gpuplan: ${e.message}\n  call: ${e.call}${e.vendorMessage ? `\n  error: ${e.vendorMessage}` : ""}${e.hint ? `\n  hint: ${e.hint}` : ""}\n`,
    );
    return EXIT.usage;
  }
  const err = e instanceof Error ? e : new InternalError(String(e));
  writeErr(
    `gpuplan: internal error — this is a bug in gpuplan, please report it with the command you ran.\n${err.stack ?? err.message}\n`,
  );
  return EXIT.usage;
}
