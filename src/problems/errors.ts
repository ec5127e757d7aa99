/**
 * The closed set of failures, grouped by who must act (STYLE.md §3):
 * - UsageError: the user can fix it (bad flag, unreadable file) → exit 2, with a hint.
 * - InputProblems: the input has problems (pipeline errors, stale plan) → exit 1.
 * - VendorError: a vendor library or a child process failed; keeps the call and its error string.
 * - anything else is our bug → InternalError, shown with a stack and a request to report it.
 */
import type { Problem } from "./problem.js";

export class UsageError extends Error {
  override name = "UsageError";
  constructor(
    message: string,
    readonly code: string,
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

export const EXIT = {
  ok: 0,
  problems: 1,
  usage: 2,
  busy: 75,
  interrupted: 130,
} as const;
