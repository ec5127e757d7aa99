/**
 * `gpuplan run … --executor slurm`: the prepared run submitted to Slurm as job arrays and followed
 * (or, with --detach, left to Slurm), its problems printed and its exit chosen as a local run's:
 * 0, 1 with failed pipelines, 130 after an interrupt cancelled the arrays.
 */
import { join } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { hasErrors, type Problem } from "../../problems/problem.js";
import type { PreparedRun } from "../../run/prepare/prepare-run.js";
import type { StreamSink } from "../../run/record/stream-target.js";
import type { GpuplanSlurmSubmission } from "../../schema-types/slurm-submit.js";
import { taskSettings } from "../../slurm/command-environment.js";
import { slurmExportOptions } from "../../slurm/executor-settings.js";
import type { SlurmRunRecord, SubmittedArray } from "../../slurm/follow/run-record.js";
import type { PipelineStatus } from "../../slurm/follow/run-status.js";
import { loadNodeShape } from "../../slurm/load-node-shape.js";
import type { RunCommand } from "../../slurm/read-cluster.js";
import { countNoun } from "../../text/count-noun.js";
import { jsonText } from "../../text/json-text.js";
import { escapeText } from "../../text/safe-text.js";
import { shellWord } from "../../text/shell-word.js";
import { formatHuman } from "../../ui/problems/human.js";
import { VERSION } from "../../version.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";
import {
  checkPlanSettings,
  gpuplanBinary,
  parseSlurmFlags,
  projectDir,
  refuseOtherClusters,
  type SlurmCliOptions,
} from "../slurm-options.js";
import {
  openView,
  type RunOptions,
  sayRecordsIncomplete,
  sayWaitingForEventsReader,
  warnRecordFailure,
} from "./run.js";

export interface SlurmRunOptions extends SlurmCliOptions {
  inventory?: string;
  detach?: boolean;
  requeue?: boolean;
}

/** How long a running task's start marker may take to show up (NFS caches a folder's entries up to 60 s). */
const SHARED_FOLDER_TIMEOUT_MS = 90_000;

export async function runOnSlurmCommand(
  file: string,
  options: RunOptions & SlurmRunOptions,
  prepared: PreparedRun,
  /** `--events` as a stream gpuplan already has (run.ts checkEventsFile): a socket as stdout. */
  eventsSink?: StreamSink,
): Promise<number> {
  const flags = parseSlurmFlags(options);
  refuseOtherClusters(process.env);
  // Slurm requeues a task whose node failed unless told not to (JobRequeue=1 is its default): the
  // follower must know which, so the scripts say it either way; --sbatch-arg comes after and wins.
  flags.sbatchArgs = [options.requeue ? "--requeue" : "--no-requeue", ...(flags.sbatchArgs ?? [])];
  const { plan } = prepared;
  const cwd = process.cwd();
  const { node, problems: nodeProblems } = await loadNodeShape(plan, file, options.inventory, cwd);
  const { completedPipelines, planSubmission, runOnSlurm } = await import(
    "../../slurm/follow/slurm-session.js"
  );
  const { QUESTION_TIMEOUT_MS, slurmCommandRunner } = await import("../../slurm/run-slurm-command.js");
  // A resume's record, read once under its lock: the squeue check, the completed pipelines, the
  // room check, the repeated-id check and the record written after sbatch all start from it.
  const { readSlurmRecord } = await import("../../slurm/follow/run-record.js");
  let record = prepared.resumed ? await readSlurmRecord(prepared.runDir) : undefined;
  if (prepared.resumed && !options.dryRun) {
    // Asked without the run's lock, taken again before anything is worked out from the run's
    // records: refused where another gpuplan changed them meanwhile (ask-unlocked.ts), so the
    // record read before stands — with the arrays Slurm named that it did not (settleResumeCheck).
    const { askUnlocked } = await import("../../slurm/follow/ask-unlocked.js");
    const check = await askUnlocked(prepared, () =>
      askSlurmBeforeResume(prepared, slurmCommandRunner(process.env, QUESTION_TIMEOUT_MS), record),
    );
    record = await settleResumeCheck(prepared, check);
  }
  const completed = await completedPipelines(prepared, record);
  const exportOptions = slurmExportOptions(plan.settings.executor?.slurm, flags);
  // The follower follows what the scripts say: an --sbatch-arg=--requeue (or --req) after
  // gpuplan's own --no-requeue makes Slurm requeue a task whose node failed, which must then not
  // be taken as the pipeline's end.
  const { requeueSaid } = await import("../../slurm/follow/may-requeue.js");
  const requeue = requeueSaid(exportOptions.sbatchArgs) === true;
  const submission = planSubmission(
    prepared,
    {
      planLabel: file,
      node,
      options: exportOptions,
      projectDir: projectDir(plan, file, cwd),
      nodeBinary: process.execPath,
      gpuplanBinary: gpuplanBinary(),
      gpuplanVersion: VERSION,
    },
    completed,
  );
  const problems: Problem[] = [
    ...checkPlanSettings(plan, file),
    ...nodeProblems,
    ...submission.export.problems,
  ];
  if (problems.length) writeErr(formatHuman(problems, [], await paintFor()));
  const [first, ...rest] = problems;
  if (first && hasErrors(problems)) {
    // A dry run's or a detached submission's JSON is one document, as a local dry run's is: a
    // program reading it gets the problems that stopped it, not an empty stdout.
    if (options.ui === "json" && (options.dryRun || options.detach)) {
      const { formatErrorJson } = await import("../../ui/problems/error-json.js");
      writeOut(formatErrorJson(EXIT.problems, [first, ...rest]));
    }
    writeErr("gpuplan run: nothing submitted\n");
    return EXIT.problems;
  }
  if (options.dryRun) {
    // runOnSlurm makes this check only once past the dry run: the dry run of a submission the
    // real one refuses (slurm-run-too-large) printed its scripts and exited 0.
    const { checkRecordRoom } = await import("../../slurm/follow/record-room.js");
    checkRecordRoom(
      record ? { run: prepared.runId, recorded: record.arrays } : null,
      submission.export.arrays,
    );
    if (options.ui === "json") {
      // --json (or --ui json) is machine output, as a local dry run's: the text was not JSON.
      const { describeSlurmDryRun } = await import("../../slurm/slurm-dry-run.js");
      const doc = describeSlurmDryRun(
        submission,
        { plan: plan.name, run: prepared.runId },
        taskSettings(process.env),
      );
      writeOut(`${jsonText(doc, 2)}\n`);
      return EXIT.ok;
    }
    const { formatSlurmDryRun } = await import("../../ui/slurm-dry-run.js");
    writeOut(formatSlurmDryRun(submission, taskSettings(process.env)));
    return EXIT.ok;
  }
  if (submission.submitted.length === 0) {
    writeErr(
      `gpuplan run: every pipeline of run ${escapeText(prepared.runId)} completed; nothing to submit\n`,
    );
    return EXIT.ok;
  }
  const { listenForInterrupts } = await import("../../run/interrupt-signals.js");
  const signals = listenForInterrupts();
  try {
    const result = await runOnSlurm(prepared, submission, {
      input: file,
      ...(options.events && { eventsFile: options.events }),
      ...(eventsSink && { eventsSink }),
      openView: (context) => openView(context, options.ui),
      onRecordFailure: warnRecordFailure,
      onWaitForEventsReader: sayWaitingForEventsReader,
      detach: options.detach ?? false,
      requeue,
      slurm: followerRunner(
        // An interrupt stops a squeue under way: a hung one must not hold Ctrl-C for a minute.
        slurmCommandRunner(process.env, QUESTION_TIMEOUT_MS, signals.interrupt),
        slurmCommandRunner(process.env, ACT_TIMEOUT_MS, signals.interrupt),
      ),
      // gpuplan's settings reach the tasks whatever the site's export policy (SBATCH_EXPORT=NONE).
      taskSettings: taskSettings(process.env),
      signal: signals.interrupt,
      sharedFolderTimeoutMs: SHARED_FOLDER_TIMEOUT_MS,
      ...(record && { record }),
    });
    // Job ids are what sbatch said; the run id may be the user's: outside text, escaped.
    const jobs = result.arrays.map((a) => escapeText(a.job));
    // The run's own id and folder: one whose id another run took drew another.
    const run = escapeText(result.runId);
    const runWord = escapeText(shellWord(result.runId));
    if (result.kind === "detached") {
      const report: GpuplanSlurmSubmission = {
        schema: "gpuplan/slurm-submit@1",
        run: result.runId,
        runDir: result.runDir,
        jobs: result.arrays,
      };
      writeOut(
        options.ui === "json"
          ? `${jsonText(report, 2)}\n`
          : `${run} submitted as Slurm job${jobs.length === 1 ? "" : "s"} ${jobs.join(" ")} (${countNoun(submission.submitted.length, "pipeline")})\n` +
              `  watch: gpuplan status ${runWord}    resume what did not complete: gpuplan run --resume ${runWord} --executor slurm\n`,
      );
      return EXIT.ok;
    }
    sayRecordsIncomplete(result.recordsIncomplete, options.events, result.runDir);
    if (result.summary.interrupted) {
      const s = jobs.length === 1 ? "" : "s";
      writeErr(
        result.cancelFailed === undefined
          ? `gpuplan: cancelled Slurm job${s} ${jobs.join(" ")} (scancel)\n`
          : `gpuplan: warning: could not cancel Slurm job${s} ${jobs.join(" ")}: ${escapeText(result.cancelFailed)}; ${jobs.length === 1 ? "it" : "they"} may still be queued or running\n` +
              `  hint: scancel ${jobs.join(" ")}, or watch: gpuplan status ${runWord}\n`,
      );
      return EXIT.interrupted;
    }
    if (result.recordsIncomplete.length > 0) return EXIT.usage;
    return result.summary.failed > 0 ? EXIT.problems : EXIT.ok;
  } finally {
    signals.dispose();
  }
}

/**
 * How long sbatch and scancel may take: each acts, and one stopped part-way may have acted
 * (an array queued, jobs cancelled) without saying so; a busy slurmctld answers them late.
 */
const ACT_TIMEOUT_MS = 60_000;

/**
 * The follower's Slurm commands: squeue and sacct only ask, and are bounded as `status` and
 * `runs` bound them (QUESTION_TIMEOUT_MS), so a hung one costs a poll 15 s, not a minute, and the
 * follower says so (a slurm.unanswered event); sbatch and scancel get ACT_TIMEOUT_MS.
 */
function followerRunner(ask: RunCommand, act: RunCommand): RunCommand {
  return (command, args, options) =>
    (command === "squeue" || command === "sacct" ? ask : act)(command, args, options);
}

/** What a resume learns from Slurm before it submits anything or runs anything here. */
interface ResumeCheck {
  /** The run's record, with `found` after its arrays. */
  record: SlurmRunRecord;
  /** Arrays of sbatch calls no record accounted for (gpuplan was stopped in a submission) that Slurm holds. */
  found: SubmittedArray[];
  /** Tasks of the run (of `record`) still queued or running. */
  active: PipelineStatus[];
}

/**
 * A resume while some of the run's tasks are still queued or running would run them twice — on
 * Slurm or here (`--executor local`). A squeue that fails cannot tell, so it stops the resume too.
 * Where gpuplan was stopped in a submission (sbatch calls no record accounts for), Slurm is asked
 * first for arrays of those calls that slurm/jobs.json does not name (unrecorded-arrays.ts).
 */
export async function refuseWhileActive(
  prepared: PreparedRun,
  slurm: RunCommand,
  /** The run's record, where the caller has read it already. */
  record?: SlurmRunRecord,
): Promise<void> {
  await settleResumeCheck(prepared, await askSlurmBeforeResume(prepared, slurm, record));
}

/** refuseWhileActive's question to Slurm: it writes nothing, and needs not the run's lock. */
async function askSlurmBeforeResume(
  prepared: PreparedRun,
  slurm: RunCommand,
  given?: SlurmRunRecord,
): Promise<ResumeCheck> {
  const { readSlurmRecord } = await import("../../slurm/follow/run-record.js");
  const { activeTasks, readSlurmRunStatus } = await import("../../slurm/follow/run-status.js");
  const record = given ?? (await readSlurmRecord(prepared.runDir));
  const open = prepared.openSbatchCalls ?? [];
  let found: SubmittedArray[] = [];
  if (open.length > 0) {
    const { findUnrecordedArrays } = await import("../../slurm/follow/unrecorded-arrays.js");
    found = await findUnrecordedArrays(slurm, open, record.arrays, {
      id: prepared.runId,
      journal: join(prepared.runDir, "journal.jsonl"),
    });
  }
  const withFound = found.length === 0 ? record : { ...record, arrays: [...record.arrays, ...found] };
  const status = await readSlurmRunStatus(
    prepared.runDir,
    prepared.pipelines.map((p) => p.name),
    slurm,
    withFound,
  );
  return { record: withFound, found, active: activeTasks(status) };
}

/**
 * refuseWhileActive's answer acted on, under the run's lock: the arrays Slurm named that the
 * record did not are recorded, and the sbatch calls settled in the journal (a `recorded` entry);
 * then refused while tasks run. Returns the record as it now stands.
 */
async function settleResumeCheck(prepared: PreparedRun, check: ResumeCheck): Promise<SlurmRunRecord> {
  const { found, active } = check;
  if ((prepared.openSbatchCalls?.length ?? 0) > 0) {
    const { recordArrays } = await import("../../slurm/follow/run-record.js");
    const { openJournal } = await import("../../run/record/journal.js");
    const { recordedEntry } = await import("../../slurm/follow/sbatch-calls.js");
    if (found.length > 0)
      await recordArrays(prepared.runDir, check.record.arrays.slice(0, -found.length), found);
    const journal = await openJournal(prepared.runDir);
    try {
      await journal.append(recordedEntry(found.map((a) => a.job)));
    } finally {
      await journal.close();
    }
    prepared.openSbatchCalls = [];
  }
  if (active.length === 0) return check.record;
  const adopted =
    found.length === 0
      ? ""
      : `; ${found.length === 1 ? "array" : "arrays"} ${found.map((a) => a.job).join(" ")} of the submission gpuplan was stopped in ${found.length === 1 ? "was" : "were"} found in Slurm by ${found.length === 1 ? "its" : "their"} script and recorded in slurm/jobs.json`;
  throw new UsageError(
    `--resume: ${active.length} task${active.length === 1 ? "" : "s"} of run ${prepared.runId} ${active.length === 1 ? "is" : "are"} still in Slurm (${active
      .slice(0, 5)
      .map((p) => `${p.job} ${p.slurmState}`)
      .join(", ")}${active.length > 5 ? ", …" : ""})${adopted}`,
    "slurm-run-active",
    `wait for them (gpuplan status ${shellWord(prepared.runId)}), or scancel ${[...new Set(active.map((p) => p.job!.split("_")[0]))].join(" ")}, then resume`,
  );
}
