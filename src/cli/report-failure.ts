/**
 * How a command that could not do its job says so: one line with the message and its code, the
 * usage line when the command line itself was wrong, the hint — and, for our own bugs, the
 * versions and the stack a report needs. Under `compile --format json` the failure is also the
 * report on stdout (one problem, `ok: false`), under `--format github` an `::error` annotation,
 * and under another command's `--json` a gpuplan/error@1 document.
 * Loaded only when something failed.
 */
import { CODES, type Code, type CodeEntry } from "../problems/codes.js";
import { UsageError, VendorError } from "../problems/errors.js";
import { EXIT } from "../problems/exit-codes.js";
import { errnoOf } from "../problems/file-errors.js";
import type { Problem } from "../problems/problem.js";
import { escapeText } from "../text/safe-text.js";
import { formatErrorJson } from "../ui/problems/error-json.js";
import { formatGithub } from "../ui/problems/github.js";
import { formatJson } from "../ui/problems/json.js";
import { VERSION } from "../version.js";
import type { CommandLineError } from "./command-line-error.js";
import { writeErr, writeOut } from "./output.js";

/**
 * human: stderr only. json: compile's report on stdout. github: an annotation on stdout.
 * error-json: a gpuplan/error@1 document on stdout, in place of the result a `--json` command
 * would have printed, and the lines for a person on stderr.
 */
export type ReportFormat = "human" | "json" | "github" | "error-json";

interface Failure {
  code: Code;
  message: string;
  hint?: string;
  /** Further lines for a person: usage, the vendor call, versions and stack. */
  details: string[];
}

/** Print the failure in the requested format; returns the exit code the registry gives it. */
export function reportFailure(e: unknown, format: ReportFormat): number {
  const failure = describeFailure(e);
  // A problem's code thrown as a failure (export's invalid-plan) still stops the command: exit 2.
  const entry: CodeEntry = CODES[failure.code];
  const exitCode = entry.kind === "failure" ? entry.exit : EXIT.usage;
  if (format === "error-json") {
    // A program reading stdout gets JSON whatever happened (`| jq` reads an empty stdout as no
    // input and succeeds); the person watching a CI log still reads what went wrong on stderr.
    writeOut(formatErrorJson(exitCode, [toProblem(failure)]));
    writeErr(formatHuman(failure));
  } else if (format === "json") {
    writeOut(
      formatJson({ ok: false, problems: [toProblem(failure)], output: null, check: null, plan: null }),
    );
    // The report is the result; a bug still shows its stack to the person reading stderr.
    if (failure.code === "internal-error") writeErr(formatHuman(failure));
  } else {
    if (format === "github") writeOut(formatGithub([toProblem(failure)]));
    writeErr(formatHuman(failure));
  }
  return exitCode;
}

function describeFailure(e: unknown): Failure {
  if (isCommandLineError(e)) {
    const hint = [e.suggestion, (CODES[e.code] as CodeEntry).hint, `see ${e.command} --help`];
    return {
      code: e.code,
      message: e.message,
      hint: joinHints(hint),
      details: [`usage: ${e.usage}`],
    };
  }
  if (e instanceof VendorError) {
    const details = [`call: ${e.call}`];
    if (e.vendorMessage) details.push(`error: ${e.vendorMessage}`);
    return { code: e.code, message: e.message, ...hintOf(e), details };
  }
  if (e instanceof UsageError) return { code: e.code, message: e.message, ...hintOf(e), details: [] };
  if (isWorkingFolderGone(e))
    return {
      code: "working-folder-gone",
      message: "the current folder no longer exists (it was removed or moved away)",
      hint: "cd to a folder that exists and run the command again (a shell can still show the old folder's name)",
      details: [],
    };
  const systemError = describeSystemError(e);
  if (systemError) return systemError;
  const err = e instanceof Error ? e : new Error(String(e));
  return {
    code: "internal-error",
    message: `internal error: ${err.message}`,
    details: [
      "this is a bug in gpuplan, not something you did wrong; please report it with the command you ran and this whole message",
      `gpuplan ${VERSION}, Node ${process.version}, ${process.platform}-${process.arch}`,
      ...(err.stack ?? "").split("\n").slice(1),
    ],
  };
}

/**
 * The system refused something gpuplan did to a file (a full disk, a read-only folder, too many
 * open files): the environment's to fix, not our bug. ENOENT is not among them: a file the user
 * named is checked where it is read, so a missing file here is more likely our mistake.
 */
const ENVIRONMENT_ERRNOS = new Set([
  "EACCES",
  "EPERM",
  "EROFS",
  "ENOSPC",
  "EDQUOT",
  "EFBIG",
  "EMFILE",
  "ENFILE",
  "EIO",
  "ENOTDIR",
  "EISDIR",
  "ELOOP",
  "ENAMETOOLONG",
]);

function describeSystemError(e: unknown): Failure | undefined {
  const errno = errnoOf(e);
  if (errno === undefined || !ENVIRONMENT_ERRNOS.has(errno) || !(e instanceof Error)) return undefined;
  const path = "path" in e && typeof e.path === "string" ? e.path : undefined;
  if (path === undefined) return undefined;
  const syscall = "syscall" in e && typeof e.syscall === "string" ? e.syscall : "access";
  return {
    code: "file-system-error",
    message: `cannot ${syscall} ${path}: ${errno}`,
    hint: "check the path, its permissions and the free space (ls -ld, df -h)",
    details: [],
  };
}

/**
 * process.cwd() of a process whose working folder was removed (`cd dir; rm -rf ../dir`): Node
 * throws ENOENT from uv_cwd wherever a command first resolves a relative path or looks for
 * .gpuplan/ — the environment's to fix, not a bug. Node caches the folder after its first call,
 * so a folder removed later, mid-run, does not land here.
 */
const isWorkingFolderGone = (e: unknown): boolean =>
  errnoOf(e) === "ENOENT" && e instanceof Error && "syscall" in e && e.syscall === "uv_cwd";

/** "did you mean --output? see gpuplan compile --help", "pick one; see …" */
const joinHints = (parts: readonly (string | undefined)[]): string =>
  parts
    .filter((p): p is string => Boolean(p))
    .reduce((all, p) => (all ? `${all}${all.endsWith("?") ? " " : "; "}${p}` : p), "");

/**
 * By its name, not instanceof: importing the class here would make it a chunk of its own that
 * every start-up loads (program.ts throws it), for the sake of a failure path.
 */
const isCommandLineError = (e: unknown): e is CommandLineError =>
  e instanceof UsageError && e.name === "CommandLineError";

const hintOf = (e: UsageError | VendorError): { hint?: string } => (e.hint ? { hint: e.hint } : {});

function toProblem(f: Failure): Problem {
  return { code: f.code, severity: "error", message: f.message, ...(f.hint && { hint: f.hint }) };
}

/**
 * Every failure a person reads is printed here, so this is where the outside text in it (a path,
 * an argument, a vendor's error string) is escaped; one line each. escapeText leaves what it
 * already escaped as it is, so a message that escaped its parts is not escaped twice.
 */
function formatHuman(f: Failure): string {
  const lines = [`gpuplan: error: ${shown(f.message)}  [${f.code}]`];
  for (const d of f.details) lines.push(`  ${shown(d.trimStart())}`);
  if (f.hint) lines.push(`  hint: ${shown(f.hint)}`);
  return `${lines.join("\n")}\n`;
}

/** A word longer than this (an argument, a path) is shown cut: no path a system takes is longer (PATH_MAX). */
const MAX_WORD = 4096;

/**
 * Escaped, and each word of more than MAX_WORD characters cut to its start and end: a
 * 100,000-character argument came back whole, twice over for `status ARG` (one line of 200 KB).
 * The --json document keeps the whole text, as data.
 */
function shown(text: string): string {
  const cut = text.replace(/\S{4097,}/gu, (w) => {
    const chars = Array.from(w);
    return chars.length <= MAX_WORD ? w : `${chars.slice(0, 200).join("")}…${chars.slice(-40).join("")}`;
  });
  return escapeText(cut);
}
