/**
 * `gpuplan status RUN [--json]`: the state of a run submitted with `gpuplan run --executor slurm`
 * — detached or followed, finished or not — per pipeline, from squeue and the run folder.
 */
import { existsSync, statSync } from "node:fs";
import { basename, join } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";
import { RUNS_DIR, readJournal } from "../../run/record/journal.js";
import { runDirOf } from "../../run/record/run-dir-of.js";
import { checkWorkingFolder } from "../../run/record/working-folder.js";
import type { GpuplanSlurmRunStatus } from "../../schema-types/slurm-run-status.js";
import { readSlurmRunStatus } from "../../slurm/follow/run-status.js";
import { describeOpenSubmission, openSbatchCalls } from "../../slurm/follow/sbatch-calls.js";
import { hasSlurmFolder, slurmRecordFile } from "../../slurm/follow/slurm-folder.js";
import { describeSubmitFailure, submitFailureOf } from "../../slurm/follow/submit-failure.js";
import { QUESTION_TIMEOUT_MS, slurmCommandRunner } from "../../slurm/run-slurm-command.js";
import { jsonText } from "../../text/json-text.js";
import { escapeText } from "../../text/safe-text.js";
import { shellWord } from "../../text/shell-word.js";
import { countStates, formatSlurmRunStatus } from "../../ui/slurm-run-status.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export interface StatusOptions {
  json?: boolean;
}

export default async function status(run: string, options: StatusOptions): Promise<number> {
  const runDir = runDirOf(run);
  if (!hasJournal(runDir)) {
    checkWorkingFolder();
    throw new UsageError(
      `no run ${run} (looked in ${runDir})`,
      "unknown-run",
      `runs are in ${RUNS_DIR}/ (gpuplan runs)`,
    );
  }
  // A file where slurm/ belongs is damaged-run (hasSlurmFolder throws it), not a local run. A
  // slurm/ without jobs.json is a Slurm run whose submission no record names (it failed).
  if (!hasSlurmFolder(runDir)) throw await notSlurmRun(run, runDir);
  const { header, entries } = await readJournal(runDir);
  if (!header) throw new UsageError(`${runDir} has no run header`, "unknown-run");
  // Its pipelines are not-submitted: why, beside the table or the JSON document. Only while no
  // record names its arrays: a resume that submitted since writes no journal entry until it ends,
  // and the old failure would be said of arrays that run.
  const failed = existsSync(slurmRecordFile(runDir)) ? null : submitFailureOf(entries);
  if (failed)
    writeErr(`gpuplan: run ${escapeText(header.run)}: ${escapeText(describeSubmitFailure(failed))}\n`);
  // Arrays of a submission gpuplan was stopped in may run under ids no record names: the table
  // cannot show them (their pipelines read not-submitted, or as their last recorded task).
  const open = failed ? [] : openSbatchCalls(entries);
  if (open.length > 0)
    writeErr(
      `gpuplan: warning: run ${escapeText(header.run)}: ${escapeText(describeOpenSubmission(open, header.run))}\n`,
    );
  const result = await readSlurmRunStatus(
    runDir,
    header.pipelines,
    slurmCommandRunner(process.env, QUESTION_TIMEOUT_MS),
  );
  // The JSON document's `unknown` has no room for why: said on stderr, as the table says it.
  if (options.json && result.sacctUnanswered !== null && result.pipelines.some((p) => p.state === "unknown"))
    writeErr(
      `gpuplan: warning: ${result.sacctUnanswered}: how the tasks squeue no longer lists ended is not known\n`,
    );
  if (options.json) {
    const doc: GpuplanSlurmRunStatus = {
      schema: "gpuplan/slurm-run-status@1",
      run: header.run,
      runDir,
      jobs: result.jobs,
      pipelines: result.pipelines,
      counts: countStates(result.pipelines),
    };
    // squeue's reason and node list are Slurm's text: a C1 control (U+009B, CSI) stays escaped.
    writeOut(`${jsonText(doc, 2)}\n`);
  } else {
    writeOut(formatSlurmRunStatus(header.run, result, await paintFor("stdout")));
  }
  return EXIT.ok;
}

/**
 * The refusal of a run that did not go to Slurm: `status` is Slurm's (its JSON is
 * slurm-run-status), but whoever asked wants to know how the run stands. It says so, as
 * `gpuplan runs` lists it, and names the command that shows this very run.
 */
async function notSlurmRun(run: string, runDir: string): Promise<UsageError> {
  const [{ describeRun }, { isRunInUse }] = await Promise.all([
    import("../../runs/list-runs.js"),
    import("../../run/record/run-lock.js"),
  ]);
  const r = await describeRun(runDir, basename(runDir), isRunInUse);
  const stands =
    r.status === "damaged"
      ? `damaged${r.problem ? ` (${r.problem})` : ""}`
      : `${r.status}: ${r.ok} ok, ${r.failed} failed, ${r.skipped} skipped`;
  return new UsageError(
    `run ${run} did not run on Slurm; it is ${stands}`,
    "not-a-slurm-run",
    `gpuplan status follows runs of gpuplan run --executor slurm; gpuplan report ${shellWord(run)} shows this one`,
  );
}

/**
 * Whether the run folder has a journal: one that is not there (nor its folder) is no run; a folder
 * gpuplan may not look into (EACCES: another user's, mode 0700) is said so, not "no run".
 */
function hasJournal(runDir: string): boolean {
  try {
    return statSync(join(runDir, "journal.jsonl"), { throwIfNoEntry: false }) !== undefined;
  } catch (e) {
    if (errnoOf(e) === "ENOTDIR") return false;
    throw fileError(e, runDir, "read", "the run folder");
  }
}
