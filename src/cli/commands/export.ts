/**
 * `gpuplan export PLAN --to slurm -o DIR`: write the plan as Slurm job arrays (one commented
 * sbatch script per distinct resource request, one task per pipeline) and submit.sh, with a copy
 * of the plan the tasks run. Flags win over the plan's `executor.slurm` settings.
 */

import { readdir, readFile, stat } from "node:fs/promises";
import { join, resolve } from "node:path";
import { PLAN_SCHEMA } from "../../plan/plan-text.js";
import { checkPlan, type PlanCheck } from "../../plan/read-plan.js";
import { upgradePlan } from "../../plan/upgrade-plan.js";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { errnoOf, fileError } from "../../problems/file-errors.js";
import { hasErrors, type Problem } from "../../problems/problem.js";
import { toReportedProblem } from "../../problems/reported-problem.js";
import { makeFoldersSync } from "../../run/record/make-folders.js";
import type { GpuplanSlurmExport } from "../../schema-types/slurm-export.js";
import { slurmExportOptions } from "../../slurm/executor-settings.js";
import { exportPlanToSlurm } from "../../slurm/export-plan.js";
import { loadNodeShape } from "../../slurm/load-node-shape.js";
import type { SourceFile } from "../../source/source-file.js";
import { jsonText } from "../../text/json-text.js";
import { randomHex } from "../../text/random-hex.js";
import { formatHuman } from "../../ui/problems/human.js";
import { formatSlurmExport } from "../../ui/slurm-export.js";
import { VERSION } from "../../version.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";
import {
  checkPlanSettings,
  gpuplanBinary,
  parseSlurmFlags,
  projectDir,
  type SlurmCliOptions,
} from "../slurm-options.js";
import { writeFolderFiles } from "../write-folder.js";

export interface ExportOptions extends SlurmCliOptions {
  to: "slurm";
  output: string;
  inventory?: string;
  json?: boolean;
  force?: boolean;
}

export default async function exportPlan(planFile: string, options: ExportOptions): Promise<number> {
  const flags = parseSlurmFlags(options);
  const text = await readFile(planFile, "utf8").catch((e: unknown) => {
    throw fileError(e, planFile, "read", "plan");
  });
  const read = await parsePlan(planFile, text);
  // A later plan format or a hand edit that breaks the plan: refused, located, as run refuses it.
  if (!read.plan) {
    const { locateProblems } = await import("../../source/locate.js");
    return refuse(planFile, options, locateProblems(read.problems, [read.source]), read.source);
  }
  const { plan } = read;
  const cwd = process.cwd();
  const outDir = resolve(cwd, options.output);
  await checkFolder(outDir, options.force ?? false);

  const { node, problems: nodeProblems } = await loadNodeShape(plan, planFile, options.inventory, cwd);
  const settingsProblems = checkPlanSettings(plan, planFile);
  const result = exportPlanToSlurm({
    plan,
    planLabel: planFile,
    node,
    options: slurmExportOptions(plan.settings.executor?.slurm, flags),
    outDir,
    planFile: join(outDir, "plan.json"),
    projectDir: projectDir(plan, planFile, cwd),
    nodeBinary: process.execPath,
    gpuplanBinary: gpuplanBinary(),
    gpuplanVersion: VERSION,
    exportId: randomHex(8),
  });
  const problems: Problem[] = [...settingsProblems, ...nodeProblems, ...result.problems];
  const failed = hasErrors(problems);
  if (!failed) {
    const made = (await stat(outDir).catch(() => null)) === null;
    try {
      makeFoldersSync(outDir);
    } catch (e) {
      throw fileError(e, outDir, "write", "folder");
    }
    // All or none (write-folder.ts): Ctrl-C between two files left the first ones written.
    // The tasks run this copy: what was exported is what runs, even if plan.json changes later.
    // The names in the folder are gpuplan's: a link planted in a --force'd folder is replaced, not followed.
    await writeFolderFiles(outDir, [{ name: "plan.json", text }, ...result.files], ["logs"], made);
  }
  if (options.json) {
    const report: GpuplanSlurmExport = {
      schema: "gpuplan/slurm-export@1",
      ok: !failed,
      plan: planFile,
      outputDir: outDir,
      nodeType: node?.label ?? null,
      submit: failed ? null : join(outDir, "submit.sh"),
      arrays: result.arrays,
      problems: problems.map(toReportedProblem),
    };
    writeOut(`${jsonText(report, 2)}\n`);
  } else if (!failed) {
    writeOut(formatSlurmExport(result.arrays, outDir, node?.label ?? null, plan.pipelines.length));
  }
  if (problems.length) writeErr(formatHuman(problems, [], await paintFor()));
  if (failed) writeErr("gpuplan export: nothing written\n");
  return failed ? EXIT.problems : EXIT.ok;
}

/**
 * A plan file read as run reads it (read-plan.ts): JSON in a plan format this gpuplan knows,
 * checked against the plan schema and the plan's invariants, its defaults filled in. Not JSON or
 * not a plan is a usage error; a later format or a broken hand edit comes back as located problems.
 */
async function parsePlan(file: string, text: string): Promise<PlanCheck> {
  let data: unknown;
  try {
    data = JSON.parse(text);
  } catch (e) {
    throw new UsageError(
      `${file} is not JSON (${(e as Error).message})`,
      "invalid-plan",
      "export takes a plan: gpuplan compile PIPELINE -o plan.json",
    );
  }
  const checked = await checkPlan({ source: { file, text }, data, problems: [] });
  if (
    checked.plan ||
    checked.problems.some((p) => p.code !== "invalid-plan" && !p.code.startsWith("schema-"))
  )
    return checked;
  const { default: validate } = await import("../../generated/plan-validator.js");
  const first = validate(upgradePlan(data)) ? undefined : validate.errors?.[0];
  throw new UsageError(
    `${file} is not a gpuplan plan (schema ${PLAN_SCHEMA}${first ? `: ${first.instancePath || "/"} ${first.message}` : ""})`,
    "invalid-plan",
    "export takes a plan: gpuplan compile PIPELINE -o plan.json",
  );
}

/** Nothing written: the plan's problems, printed as the export's are (exit 1). */
async function refuse(
  planFile: string,
  options: ExportOptions,
  problems: Problem[],
  source: SourceFile,
): Promise<number> {
  if (options.json) {
    const report: GpuplanSlurmExport = {
      schema: "gpuplan/slurm-export@1",
      ok: false,
      plan: planFile,
      outputDir: resolve(process.cwd(), options.output),
      nodeType: null,
      submit: null,
      arrays: [],
      problems: problems.map(toReportedProblem),
    };
    writeOut(`${jsonText(report, 2)}\n`);
  }
  writeErr(formatHuman(problems, [source], await paintFor()));
  writeErr("gpuplan export: nothing written\n");
  return EXIT.problems;
}

/** The output folder may be new, empty, or (with --force) hold anything. */
async function checkFolder(dir: string, force: boolean): Promise<void> {
  let entries: string[] = [];
  try {
    entries = await readdir(dir);
  } catch (e) {
    // Said as for every path gpuplan writes: "cannot use it as a folder (ENOTDIR)" named the errno only.
    if (errnoOf(e) === "ENOTDIR" && (await stat(dir).catch(() => null)) !== null)
      throw new UsageError(
        `cannot write folder ${dir}: it is a file, not a folder`,
        "unwritable-file",
        "give a folder path (export writes several files)",
      );
    if (errnoOf(e) !== "ENOENT") throw fileError(e, dir, "write", "folder");
  }
  if (entries.length > 0 && !force)
    throw new UsageError(
      `-o ${dir} is not empty`,
      "output-not-empty",
      "give a new folder, or --force to write over the files gpuplan writes there",
    );
}
