/**
 * The closed set of failures, grouped by who must act (STYLE.md §3); each carries a code from
 * the registry (codes.ts), which also says how the command ends (exit-codes.ts):
 * - UsageError: the user can fix it (bad flag, unreadable file, a path mistake), with a hint.
 * - InputProblems: the input has problems (pipeline errors, stale plan).
 * - VendorError: a vendor library or a child process failed; keeps the call and its error string.
 * - anything else is our bug: shown with the versions and the stack, and a request to report it.
 */
import type { Code } from "./codes.js";
import type { Problem } from "./problem.js";

export class UsageError extends Error {
  override name = "UsageError";
  constructor(
    message: string,
    readonly code: Code,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export class InputProblems extends Error {
  override name = "InputProblems";
  constructor(readonly problems: Problem[]) {
    super(`${problems.length} problem(s) in the input`);
  }
}

export class VendorError extends Error {
  override name = "VendorError";
  constructor(
    message: string,
    readonly code: Code,
    readonly call: string,
    readonly vendorMessage?: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

export class InternalError extends Error {
  override name = "InternalError";
}
