/**
 * `gpuplan export PLAN --to slurm -o DIR`: write the plan as Slurm job arrays (one commented
 * sbatch script per distinct resource request, one task per pipeline) and submit.sh, with a copy
 * of the plan the tasks run. Flags win over the plan's `executor.slurm` settings.
 */

import { realpathSync } from "node:fs";
import { chmod, mkdir, readdir, readFile } from "node:fs/promises";
import { dirname, isAbsolute, join, resolve } from "node:path";
import { pipelineSchema } from "../../generated/schema-values.js";
import { writeFileAtomic } from "../../plan/write-atomic.js";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { fileError } from "../../problems/file-errors.js";
import { error, hasErrors, type Problem } from "../../problems/problem.js";
import { toReportedProblem } from "../../problems/reported-problem.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";
import type { GpuplanSlurmExport } from "../../schema-types/slurm-export.js";
import { type SlurmFlags, slurmExportOptions } from "../../slurm/executor-settings.js";
import { exportPlanToSlurm } from "../../slurm/export-plan.js";
import { loadNodeShape } from "../../slurm/load-node-shape.js";
import { formatHuman } from "../../ui/problems/human.js";
import { formatSlurmExport } from "../../ui/slurm-export.js";
import { VERSION } from "../../version.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export interface ExportOptions {
  to: "slurm";
  output: string;
  inventory?: string;
  partition?: string;
  account?: string;
  qos?: string;
  gresType: string[];
  throttle?: string;
  timeFactor?: string;
  /** Parsed and bounded by the CLI (arg-parsers.ts), as --mem. */
  time?: number;
  cpusPerTask?: string;
  mem?: number;
  shards: boolean;
  sbatchArg: string[];
  json?: boolean;
  force?: boolean;
}

// The pipeline file's patterns for the same settings: one rule wherever they come from.
const SLURM_NAME = new RegExp(pipelineSchema.patterns.SlurmName);
const GRES_TYPE = new RegExp(pipelineSchema.patterns.GresType);
/** One sbatch option per argument, nothing a shell or sbatch's #SBATCH reader would split or expand. */
const SBATCH_ARG = /^-[^\s"'%\\]*$/;
/** These would break the one-task-per-pipeline contract of the scripts. */
const RESERVED_ARGS = /^(--array|-a|--wrap)(=|$)/;

export default async function exportPlan(planFile: string, options: ExportOptions): Promise<number> {
  const flags = parseFlags(options);
  const text = await readFile(planFile, "utf8").catch((e: unknown) => {
    throw fileError(e, planFile, "read", "plan");
  });
  const plan = await parsePlan(planFile, text);
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
  });
  const problems: Problem[] = [...settingsProblems, ...nodeProblems, ...result.problems];
  const failed = hasErrors(problems);
  if (!failed) {
    await mkdir(join(outDir, "logs"), { recursive: true }).catch((e: unknown) => {
      throw fileError(e, join(outDir, "logs"), "write", "folder");
    });
    await mkdir(join(outDir, "events"), { recursive: true });
    // The tasks run this copy: what was exported is what runs, even if plan.json changes later.
    await writeFileAtomic(join(outDir, "plan.json"), text);
    for (const f of result.files) {
      const path = join(outDir, f.name);
      await writeFileAtomic(path, f.text);
      if (f.executable) await chmod(path, 0o755);
    }
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
    writeOut(`${JSON.stringify(report, null, 2)}\n`);
  } else if (!failed) {
    writeOut(formatSlurmExport(result.arrays, outDir, node?.label ?? null, plan.pipelines.length));
  }
  if (problems.length) writeErr(formatHuman(problems, [], await paintFor()));
  if (failed) writeErr("gpuplan export: nothing written\n");
  return failed ? EXIT.problems : EXIT.ok;
}

function parseFlags(o: ExportOptions): SlurmFlags {
  const flags: SlurmFlags = {};
  for (const key of ["partition", "account", "qos"] as const) {
    const value = o[key];
    if (value === undefined) continue;
    if (!SLURM_NAME.test(value))
      throw new UsageError(
        `--${key} ${value}: not a Slurm ${key} name`,
        "invalid-option-value",
        "letters, digits, _ . + -",
      );
    flags[key] = value;
  }
  if (o.gresType.length) {
    flags.gresTypes = {};
    for (const g of o.gresType) {
      const eq = g.lastIndexOf("=");
      const model = eq >= 0 ? g.slice(0, eq) : "*";
      const type = eq >= 0 ? g.slice(eq + 1) : g;
      if (model === "" || !GRES_TYPE.test(type))
        throw new UsageError(
          `--gres-type ${g}: not [MODEL=]TYPE`,
          "invalid-option-value",
          "e.g. --gres-type h100, --gres-type 'NVIDIA L4=l4', --gres-type any (untyped gpu:N)",
        );
      flags.gresTypes[model] = type;
    }
  }
  const positive = (flag: string, value: string | undefined): number | undefined => {
    if (value === undefined) return undefined;
    if (!/^[1-9][0-9]{0,6}$/.test(value))
      throw new UsageError(`${flag} ${value}: not a positive whole number`, "invalid-option-value");
    return Number(value);
  };
  const throttle = positive("--throttle", o.throttle);
  const cpus = positive("--cpus-per-task", o.cpusPerTask);
  if (throttle !== undefined) flags.throttle = throttle;
  if (cpus !== undefined) flags.cpusPerTask = cpus;
  if (o.timeFactor !== undefined) {
    const f = Number(o.timeFactor);
    if (!/^[0-9]+(\.[0-9]+)?$/.test(o.timeFactor) || f < 1 || f > 100)
      throw new UsageError(`--time-factor ${o.timeFactor}: a number from 1 to 100`, "invalid-option-value");
    flags.timeFactor = f;
  }
  if (o.time !== undefined) flags.timeMs = o.time;
  if (o.mem !== undefined) flags.memPerTaskBytes = o.mem;
  if (o.shards === false) flags.shards = false;
  for (const a of o.sbatchArg) {
    if (!SBATCH_ARG.test(a) || RESERVED_ARGS.test(a))
      throw new UsageError(
        `--sbatch-arg ${a}: ${RESERVED_ARGS.test(a) ? "gpuplan writes this one itself" : "one sbatch option without spaces, quotes, % or \\"}`,
        "invalid-option-value",
        "e.g. --sbatch-arg=--constraint=ib --sbatch-arg=--exclusive",
      );
  }
  if (o.sbatchArg.length) flags.sbatchArgs = o.sbatchArg;
  return flags;
}

/** A plan file: JSON with schema gpuplan/plan@1, checked against the plan schema. */
async function parsePlan(file: string, text: string): Promise<GpuplanPlan> {
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
  const { default: validate } = await import("../../generated/plan-validator.js");
  if (!validate(data)) {
    const first = validate.errors?.[0];
    throw new UsageError(
      `${file} is not a gpuplan plan (schema gpuplan/plan@1${first ? `: ${first.instancePath || "/"} ${first.message}` : ""})`,
      "invalid-plan",
      "export takes a plan: gpuplan compile PIPELINE -o plan.json",
    );
  }
  return data as GpuplanPlan;
}

/** The plan's own executor settings: the schema checked their shape, these their content. */
function checkPlanSettings(plan: GpuplanPlan, file: string): Problem[] {
  const s = plan.settings.executor?.slurm;
  if (!s) return [];
  const bad: string[] = [];
  for (const key of ["partition", "account", "qos"] as const) {
    const v = s[key];
    if (v !== undefined && !SLURM_NAME.test(v)) bad.push(`${key} ${JSON.stringify(v)}`);
  }
  for (const [model, type] of Object.entries(s.gresTypes ?? {}))
    if (!GRES_TYPE.test(type)) bad.push(`gresTypes[${JSON.stringify(model)}] ${JSON.stringify(type)}`);
  for (const a of s.sbatchArgs ?? [])
    if (!SBATCH_ARG.test(a) || RESERVED_ARGS.test(a)) bad.push(`sbatch argument ${JSON.stringify(a)}`);
  return bad.map((b) =>
    error({
      code: "slurm-unsafe-value",
      message: `the plan's executor.slurm ${b.slice(0, 160)} cannot go into an sbatch script`,
      hint: "fix registry.executor.slurm in the pipeline file and compile again",
      file,
      pointer: "/settings/executor/slurm",
    }),
  );
}

/** The tasks' working folder: where the plan's pipeline file resolves, as gpuplan run looks for it. */
function projectDir(plan: GpuplanPlan, planFile: string, cwd: string): string {
  const source = plan.source.file;
  if (isAbsolute(source) || existsFrom(cwd, source)) return cwd;
  const planDir = resolve(cwd, dirname(planFile));
  return existsFrom(planDir, source) ? planDir : cwd;
}

function existsFrom(dir: string, file: string): boolean {
  try {
    realpathSync(resolve(dir, file));
    return true;
  } catch {
    return false;
  }
}

/** This gpuplan's entry script (bin/gpuplan.js), so the tasks run the same version. */
function gpuplanBinary(): string {
  const entry = process.argv[1] ?? "gpuplan";
  try {
    return realpathSync(entry);
  } catch {
    return entry;
  }
}

/** The output folder may be new, empty, or (with --force) hold anything. */
async function checkFolder(dir: string, force: boolean): Promise<void> {
  let entries: string[] = [];
  try {
    entries = await readdir(dir);
  } catch (e) {
    const code = (e as NodeJS.ErrnoException).code;
    if (code !== "ENOENT")
      throw new UsageError(
        `-o ${dir}: cannot use it as a folder (${code})`,
        "unwritable-file",
        "give a folder path",
      );
  }
  if (entries.length > 0 && !force)
    throw new UsageError(
      `-o ${dir} is not empty`,
      "output-not-empty",
      "give a new folder, or --force to write over the files gpuplan writes there",
    );
}
