/**
 * `gpuplan report [RUN | PLAN.json] [-o FILE] [--format html|trace]`: a run's (the newest by
 * default) or a plan's report as one HTML file, or as a Chrome trace. Without -o the result goes
 * to stdout when it is a pipe or a file, and into the run folder (or beside the plan) on a terminal.
 */
import { realpathSync } from "node:fs";
import { stat } from "node:fs/promises";
import { basename, dirname, join, relative, sep } from "node:path";
import { readPlanFile } from "../../plan/read-plan.js";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import type { ListedStatus } from "../../report/listed-status.js";
import type { ReportModel } from "../../report/model.js";
import { buildPlanReport } from "../../report/plan-report.js";
import { checkRunFolder, findRunDir, readRunFolder } from "../../report/run-folder.js";
import { buildRunReport } from "../../report/run-report.js";
import { toChromeTrace } from "../../report/trace.js";
import type { RunInUse } from "../../runs/list-runs.js";
import type { RunCommand } from "../../slurm/read-cluster.js";
import { countNoun } from "../../text/count-noun.js";
import { jsonText } from "../../text/json-text.js";
import { escapeText } from "../../text/safe-text.js";
import { formatHuman } from "../../ui/problems/human.js";
import { renderReportHtml } from "../../ui/report/render-html.js";
import { formatSize } from "../../units/size.js";
import { VERSION } from "../../version.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";
import { writeUserFile } from "../write-file.js";

export interface ReportOptions {
  output?: string;
  format: "html" | "trace";
}

export default async function report(target: string | undefined, options: ReportOptions): Promise<number> {
  let model: ReportModel;
  let home: string;
  /** What the report was drawn from: -o must not name it. */
  let source: { plan: string } | { runDir: string };
  if (target !== undefined && (await stat(target).catch(() => null))?.isFile()) {
    source = { plan: target };
    const checked = await readPlanFile(target);
    if (!checked.plan) {
      writeErr(formatHuman(checked.problems, [checked.source], await paintFor()));
      return EXIT.problems;
    }
    // A YAML plan's parser warnings (`%YAML 1.1`); the report is made all the same.
    if (checked.problems.length > 0) {
      const { locateProblems } = await import("../../source/locate.js");
      const located = locateProblems(checked.problems, [checked.source]);
      writeErr(formatHuman(located, [checked.source], await paintFor()));
    }
    model = buildPlanReport(checked.plan, target);
    home = join(dirname(target), basename(target).replace(/\.json$/, ""));
  } else {
    const runDir = await findRunDir(target);
    source = { runDir };
    await checkRunFolder(runDir, target ?? runDir);
    model = await runReport(runDir);
    home = join(runDir, "report");
  }
  const text =
    options.format === "trace" ? `${jsonText(toChromeTrace(model))}\n` : renderReportHtml(model, VERSION);
  const ext = options.format === "trace" ? ".trace.json" : ".html";
  const output = options.output ?? (process.stdout.isTTY ? `${home}${ext}` : "-");
  if (options.output !== undefined && output !== "-") refuseToOverwriteSource(output, source);
  if (output === "-") writeOut(text);
  // A default path is gpuplan's choice, in a folder others may write to: a link there is replaced, not followed.
  else await writeUserFile(output, text, "report", options.output === undefined ? "chosen" : "named");
  const h = model.header;
  const what =
    h.kind === "run"
      ? `${h.title}: ${countNoun(h.counts.steps, "step")}, ${countNoun(h.counts.attempts, "attempt")}, ${h.status}`
      : `${h.title}: ${countNoun(h.counts.steps, "step")}`;
  // The run's id and the notes come from its folder: outside text, escaped for the terminal.
  writeErr(
    `${(await paintFor()).bold("gpuplan report:")} ${escapeText(what)}; ${output === "-" ? "on stdout" : `wrote ${escapeText(output)}`} (${formatSize(Buffer.byteLength(text))})\n`,
  );
  for (const note of h.notes) writeErr(`  note: ${escapeText(note)}\n`);
  return EXIT.ok;
}

/** The names gpuplan itself writes its report under in a run folder (the default -o). */
const REPORT_NAMES = new Set(["report.html", "report.trace.json"]);

/**
 * `-o` naming the plan being reported, or a file of the run's own records (events.jsonl,
 * journal.jsonl, plan.json, a log): report -o RUN/events.jsonl replaced the run's events with the
 * page, and the next report of that run found nothing that ran.
 */
function refuseToOverwriteSource(output: string, source: { plan: string } | { runDir: string }): void {
  const target = realpathOrNull(output);
  if (target === null) return;
  if ("plan" in source) {
    if (realpathOrNull(source.plan) === target)
      throw new UsageError(
        `-o ${output} is ${source.plan}, the plan this report reads: writing the report there would destroy it`,
        "conflicting-options",
        "write the report to its own file, e.g. -o report.html",
      );
    return;
  }
  const dir = realpathOrNull(source.runDir);
  if (dir === null || !target.startsWith(`${dir}${sep}`)) return;
  if (dirname(target) === dir && REPORT_NAMES.has(basename(target))) return;
  throw new UsageError(
    `-o ${output} is ${relative(dir, target)} in the run folder ${source.runDir}, which this report reads: writing the report there would destroy the run's records`,
    "conflicting-options",
    "write the report to its own file, e.g. -o report.html",
  );
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}

/**
 * The report model of the run in `runDir`. Its own function so that the events read for it (most
 * of a big run's memory) can be freed before the page is written: held to the end, they added
 * their size to the peak the page's text brings.
 */
async function runReport(runDir: string): Promise<ReportModel> {
  const folder = await readRunFolder(runDir);
  return buildRunReport(folder, await listedStatus(runDir, folder.id));
}

/**
 * How gpuplan runs lists the run, when it went to Slurm, asked as runs asks it (the run folder's
 * lock, and Slurm for tasks that have not said how they ended) so that report and runs agree. The
 * lock (koffi) and the Slurm commands are loaded only when a Slurm run asks.
 */
async function listedStatus(runDir: string, id: string): Promise<ListedStatus | null> {
  const { readListedStatus } = await import("../../report/listed-status.js");
  const inUse: RunInUse = async (dir) => (await import("../../run/record/run-lock.js")).isRunInUse(dir);
  let slurm: RunCommand | undefined;
  const askSlurm: RunCommand = async (command, args, options) => {
    const { QUESTION_TIMEOUT_MS, rememberUnanswered, slurmCommandRunner } = await import(
      "../../slurm/run-slurm-command.js"
    );
    slurm ??= rememberUnanswered(slurmCommandRunner(process.env, QUESTION_TIMEOUT_MS));
    return slurm(command, args, options);
  };
  return readListedStatus(runDir, id, inUse, askSlurm);
}
