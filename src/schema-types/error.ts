/* Generated from schemas/error.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * What a command given `--json` prints on stdout, in place of its result, when it cannot do its job: a bad flag, a file it cannot read, a run that does not exist, a vendor library or Slurm command that failed — or, for `run --dry-run --json` and `run --detach --json`, the problems that stopped it (a plan that no longer fits this machine), located in their files. The same failure is said on stderr for a person, and the exit status is the one in the exit codes. `compile --format json` reports its failures in its own compile report instead, and `run --json` (its events as JSON Lines) prints no such document.
 */
export interface GpuplanError {
  schema: "gpuplan/error@1";
  ok: false;
  /**
   * The exit status gpuplan ends with (2: usage, a file, a vendor library; 1: problems in the input).
   */
  exitCode: number;
  /**
   * What went wrong: a failure as one problem, whose `code` says which it is, or the problems that stopped the command.
   *
   * @minItems 1
   */
  problems: [ReportedProblem, ...ReportedProblem[]];
}
/**
 * One problem gpuplan found in its input, located in its file: the same shape in a compile report's `problems` and a plan's `diagnostics`. Tools match on `code`, never on `message`.
 */
export interface ReportedProblem {
  /**
   * Stable kebab-case code, e.g. unknown-memory-type.
   */
  code: string;
  severity: "error" | "warning";
  message: string;
  /**
   * How to fix it.
   */
  hint?: string;
  /**
   * The file the problem is in, as the user named it.
   */
  file?: string;
  line?: number;
  column?: number;
  /**
   * RFC 6901 JSON pointer into the parsed file.
   */
  pointer?: string;
}
