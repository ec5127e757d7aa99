/** `gpuplan compile FILE`: parse options, call the core, pick the output, set the exit code. */
import { fstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { realpath } from "node:fs/promises";
import { dirname } from "node:path";
import { compilePlan } from "../../compile/compile.js";
import type { History } from "../../history/read-history.js";
import { type InventoryChoice, loadInventoryFile, targetInventory } from "../../inventory/load-inventory.js";
import {
  checkPipelineText,
  type LoadedPipelineFile,
  loadPipelineFile,
} from "../../pipeline/load-pipeline.js";
import { describeStaleness } from "../../plan/staleness.js";
import { writeFileAtomic } from "../../plan/write-atomic.js";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { error, hasErrors, type Problem } from "../../problems/problem.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";
import { readSourceText } from "../../source/read-source-text.js";
import { formatGithub } from "../../ui/problems/github.js";
import { countLine, formatHuman } from "../../ui/problems/human.js";
import { formatJson } from "../../ui/problems/json.js";
import { formatDuration } from "../../units/duration.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export interface CompileOptions {
  output?: string;
  inventory?: string;
  target?: string;
  check?: string;
  format: "human" | "json" | "github";
  strict?: boolean;
  /** Run ids or folders to learn estimates from, or ["auto"]. */
  history?: string[];
  /** Live detection tells gpuplan's own GPU processes by the slot lock directory. */
  lockDir: string;
}

/** How a pipeline read from stdin (`compile -`) is named in problems and in the plan. */
const STDIN_NAME = "<stdin>";

export default async function compile(file: string, options: CompileOptions): Promise<number> {
  if (options.inventory && options.target) {
    throw new UsageError(
      "--inventory and --target cannot be used together",
      "conflicting-options",
      "pick one",
    );
  }
  if (options.check && options.output) {
    throw new UsageError(
      "--check and --output cannot be used together",
      "conflicting-options",
      "--check never writes",
    );
  }
  // `-o -` is stdout, the default.
  const output = options.output === "-" ? undefined : options.output;
  if (output !== undefined) await refuseToOverwriteInputs(output, [file, options.inventory, options.check]);
  const loaded =
    file === "-" ? checkPipelineText(STDIN_NAME, await readStdin()) : await loadPipelineFile(file);
  const choice = await chooseInventory(options);
  const fromStdin = file === "-";
  const history = options.history ? await readRuns(options.history, file, loaded) : undefined;
  const result = compilePlan(loaded, choice, {
    planDir: planFolder(file, output, options.check),
    fromStdin,
    ...(history && { history }),
  });
  if (history) writeErr(historyLines(history, result.plan, options.history!));
  let problems = result.problems;
  if (options.strict) problems = problems.map((p) => ({ ...p, severity: "error" as const }));
  const ok = !hasErrors(problems) && result.planText !== undefined;

  let upToDate: boolean | undefined;
  if (ok && options.check) {
    const current = await readSourceText(options.check, "plan");
    upToDate = current === result.planText;
    if (!upToDate)
      problems = [...problems, checkProblem(options.check, current, result.planText!, file, options)];
  }
  if (ok && output) await writeFileAtomic(output, result.planText!, "plan");

  const failed = hasErrors(problems);
  const paint = await paintFor();
  switch (options.format) {
    case "json":
      writeOut(
        formatJson({
          ok: !failed,
          problems,
          output: ok && output ? output : null,
          check: options.check && upToDate !== undefined ? { plan: options.check, upToDate } : null,
          plan: ok && !output && !options.check ? result.plan! : null,
        }),
      );
      break;
    case "github":
      writeOut(formatGithub(problems));
      break;
    default: {
      if (problems.length) writeErr(formatHuman(problems, result.sources, paint));
      if (ok && !output && !options.check) writeOut(result.planText!);
    }
  }
  if (options.format !== "json")
    writeErr(summaryLine(result.plan, problems, failed, options, output, paint.bold));
  return failed ? EXIT.problems : EXIT.ok;
}

/**
 * The folder the plan will live in, which its paths are relative to: -o's, --check's, the file
 * standard output is redirected to (`> plan.json`), else the pipeline's own.
 */
function planFolder(file: string, output: string | undefined, check: string | undefined): string {
  const named = output ?? check;
  const planFile = named === undefined ? stdoutFile() : regularFile(named);
  return dirname(planFile ?? (file === "-" ? "." : file));
}

/** The plan file `path` names: itself, the file `/dev/stdout` is redirected to, none for a pipe or a device. */
function regularFile(path: string): string | undefined {
  const isDevice = path.startsWith("/dev/") || path.startsWith("/proc/");
  try {
    if (!statSync(path).isFile()) return undefined;
    return isDevice ? realpathSync(path) : path;
  } catch {
    return path; // Not there yet: -o creates it.
  }
}

/** The regular file standard output writes to, when it is one (Linux names it in /proc). */
function stdoutFile(): string | undefined {
  try {
    if (!fstatSync(1).isFile()) return undefined;
    const target = readlinkSync("/proc/self/fd/1");
    return target.startsWith("/") ? target : undefined;
  } catch {
    return undefined;
  }
}

/** The runs --history names, read only when it is given. */
async function readRuns(refs: string[], file: string, loaded: LoadedPipelineFile): Promise<History> {
  const { readHistory } = await import("../../history/read-history.js");
  return readHistory(refs, file, loaded.resolved?.name ?? "");
}

/** Which runs compile learned from and how many steps it learned, on stderr. */
function historyLines(history: History, plan: GpuplanPlan | undefined, refs: string[]): string {
  const lines = history.notes.map((n) => `history: ${n}`);
  const auto = refs.length === 1 && refs[0] === "auto";
  if (history.runs.length === 0) {
    lines.push(
      `history: no runs to learn from${auto ? " (no run of this pipeline file in the runs folder)" : ""}; the file's estimates are used`,
    );
  } else {
    const steps = new Set(
      plan?.pipelines.flatMap((p) =>
        p.steps.filter((s) => s.learned).map((s) => `${p.template}\u0000${s.id}`),
      ),
    );
    lines.push(
      `history: learned ${count(steps.size, "step")} from ${count(history.runs.length, "run")}` +
        `${auto ? " (auto: the newest of this pipeline file)" : ""}: ${history.runs.join(", ")}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

async function chooseInventory(options: CompileOptions): Promise<InventoryChoice> {
  if (options.inventory) return loadInventoryFile(options.inventory);
  if (options.target) return targetInventory(options.target);
  // Live detection: imported only here, so `compile --target` never loads it.
  const { detectInventory } = await import("../../detect/index.js");
  return { inventory: await detectInventory({ lockDir: options.lockDir }), label: "detect", problems: [] };
}

const choiceFlag = (o: CompileOptions): string =>
  o.inventory ? ` --inventory ${o.inventory}` : o.target ? ` --target ${o.target}` : "";

/**
 * `--check PLAN` found a difference. The hint offers to rewrite PLAN only when PLAN is a plan: a
 * pipeline file or anything else passed by mistake must never be one copy-paste from overwritten.
 */
function checkProblem(
  check: string,
  current: string,
  planText: string,
  file: string,
  options: CompileOptions,
): Problem {
  if (!looksLikePlan(current)) {
    return error({
      code: "invalid-plan",
      message: `${check} is not a gpuplan plan (schema gpuplan/plan@1), so there is nothing to check`,
      hint: "--check takes a plan written by gpuplan compile -o PLAN; the pipeline file is the first argument",
      file: check,
    });
  }
  return error({
    code: "stale-plan",
    message: `${check} is not what compile writes now: ${describeStaleness(current, planText)}`,
    hint: `run: gpuplan compile ${file}${choiceFlag(options)} -o ${check}${file === "-" ? " with the pipeline on stdin" : ""}`,
    file: check,
  });
}

function looksLikePlan(text: string): boolean {
  try {
    const data: unknown = JSON.parse(text);
    return typeof data === "object" && data !== null && "schema" in data && data.schema === "gpuplan/plan@1";
  } catch {
    return false;
  }
}

/** `-o` naming the pipeline, the inventory or the plan under --check would destroy an input. */
async function refuseToOverwriteInputs(
  output: string,
  inputs: readonly (string | undefined)[],
): Promise<void> {
  const target = await realpath(output).catch(() => null);
  if (target === null) return;
  for (const input of inputs) {
    if (input === undefined || input === "-") continue;
    if ((await realpath(input).catch(() => null)) === target) {
      throw new UsageError(
        `-o ${output} is ${input}, an input of this compile: writing the plan there would destroy it`,
        "conflicting-options",
        "write the plan to its own file, e.g. -o plan.json",
      );
    }
  }
}

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`;

function summaryLine(
  plan: GpuplanPlan | undefined,
  problems: Problem[],
  failed: boolean,
  options: CompileOptions,
  output: string | undefined,
  bold: (s: string) => string,
): string {
  if (failed || !plan) return `${bold("gpuplan compile:")} ${countLine(problems)}; no plan written\n`;
  const s = plan.summary;
  const ratio = s.lowerBoundMs > 0 ? ` (${(s.makespanMs / s.lowerBoundMs).toFixed(2)}× lower bound)` : "";
  const where = options.check
    ? `${options.check} is up to date`
    : output
      ? `wrote ${output}`
      : "plan on stdout";
  const onGpus = s.gpuPipelines > 0 ? `${s.gpuPipelines} on ${count(plan.registry.length, "GPU")}` : "";
  const onCpu = s.cpuPipelines > 0 ? (s.gpuPipelines > 0 ? `${s.cpuPipelines} on CPU` : "all on CPU") : "";
  const split = [onGpus, onCpu].filter(Boolean).join(", ");
  return (
    `${bold("gpuplan compile:")} ${count(s.pipelines, "pipeline")}${split ? ` (${split})` : ""}, ` +
    `est. makespan ${formatDuration(s.makespanMs)}${ratio}; ${countLine(problems)}; ${where}\n`
  );
}
