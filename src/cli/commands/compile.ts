/** `gpuplan compile FILE`: parse options, call the core, pick the output, set the exit code. */
import { fstatSync, readlinkSync, realpathSync, statSync } from "node:fs";
import { dirname, relative, resolve } from "node:path";
import { type CompileResult, compilePlan } from "../../compile/compile.js";
import type { History } from "../../history/read-history.js";
import {
  chooseTarget,
  type InventoryChoice,
  isBuiltInTarget,
  loadInventoryFile,
} from "../../inventory/load-inventory.js";
import {
  checkPipelineText,
  type LoadedPipelineFile,
  loadPipelineFile,
} from "../../pipeline/load-pipeline.js";
import { realPlanFolder } from "../../plan/plan-paths.js";
import {
  MAX_PLAN_BYTES,
  PlanTooLarge,
  planBytesUpToLimit,
  planTooLargeProblem,
  withinPlanLimit,
} from "../../plan/plan-size.js";
import { isPlanSchema, PLAN_SCHEMA, planDocument, planPieces } from "../../plan/plan-text.js";
import { describeStaleness, learnedRuns } from "../../plan/staleness.js";
import { dedupeProblems } from "../../problems/dedupe.js";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { error, hasErrors, type Problem, sortProblems } from "../../problems/problem.js";
import { RUN_ID_PATTERN, SLURM_RUN_ID_PATTERN } from "../../run/prepare/run-id.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";
import { readSourceText, readStdinText } from "../../source/read-source-text.js";
import { displayText, escapeText } from "../../text/safe-text.js";
import { shellWord } from "../../text/shell-word.js";
import { formatGithub } from "../../ui/problems/github.js";
import { countLine, formatHuman } from "../../ui/problems/human.js";
import { formatJson } from "../../ui/problems/json.js";
import { formatDuration } from "../../units/duration.js";
import { BIG_INPUT_CHARS, collectGarbage } from "../collect-garbage.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";
import { writeUserFile } from "../write-file.js";

export interface CompileOptions {
  output?: string;
  inventory?: string;
  target?: string;
  /** `--check PLAN`, repeatable: each plan against the inventory it records (or the one named). */
  check?: string[];
  /** `--targets-dir`: where custom targets are (default: .gpuplan/targets next to the pipeline and here). */
  targetsDir?: string;
  format: "human" | "json" | "github";
  strict?: boolean;
  /** Run ids or folders to learn estimates from, or ["auto"]. */
  history?: string[];
  /** Live detection tells gpuplan's own GPU processes by the slot lock directory. */
  lockDir: string;
}

/** How a pipeline read from stdin (`compile -`) is named in problems and in the plan. */
const STDIN_NAME = "<stdin>";
/** How much of a plan for stdout is kept from measuring it to write it (writePlanWithinLimit). */
const KEEP_STDOUT_BYTES = 8 * 1024 * 1024;

export default async function compile(file: string, options: CompileOptions): Promise<number> {
  if (options.inventory && options.target) {
    throw new UsageError(
      "--inventory and --target cannot be used together",
      "conflicting-options",
      "pick one",
    );
  }
  if (options.check?.length && options.output) {
    throw new UsageError(
      "--check and --output cannot be used together",
      "conflicting-options",
      "--check never writes",
    );
  }
  // `-o -` is stdout, the default.
  const output = options.output === "-" ? undefined : options.output;
  const checks = options.check ?? [];
  if (output !== undefined)
    await refuseToOverwriteInputs(output, [
      file,
      options.inventory,
      ...checks,
      await customTargetFile(file, options),
    ]);
  const { compiles, history, big } = await compileEach(file, options, output, checks);
  // The pipeline file and its expansion are garbage now; only the plans are live.
  if (big) await collectGarbage();
  const first = compiles[0]!;
  const { result } = first;
  if (history) writeErr(historyLines(history, result.learnedSteps ?? 0, options.history!));
  let problems = sortProblems(dedupeProblems(compiles.flatMap((c) => c.problems)));
  const sources = [
    ...new Map(compiles.flatMap((c) => c.result.sources).map((src) => [src.file, src])).values(),
  ];
  let failed = hasErrors(problems) || result.plan === undefined;
  const written = failed ? undefined : await writePlanWithinLimit(result.plan!, output, checks.length > 0);
  const tooLarge = written?.tooLarge;
  if (tooLarge !== undefined) {
    const { locateProblems } = await import("../../source/locate.js");
    const problem = planTooLargeProblem(file === "-" ? STDIN_NAME : file, tooLarge);
    problems = sortProblems([...problems, ...locateProblems([problem], sources)]);
    failed = true;
  }

  const paint = await paintFor();
  const checked = compiles.filter((c) => c.check !== undefined && c.upToDate !== undefined);
  switch (options.format) {
    case "json":
      writeOut(
        formatJson({
          ok: !failed,
          problems,
          output: !failed && output ? output : null,
          check: checked[0] ? { plan: checked[0].check!, upToDate: checked[0].upToDate! } : null,
          ...(checks.length > 1 && {
            checks: checked.map((c) => ({ plan: c.check!, upToDate: c.upToDate!, inventory: c.label })),
          }),
          // As the plan file holds it: `jq .plan` gives the plan compile would write.
          plan: !failed && !output && checks.length === 0 ? planDocument(result.plan!) : null,
        }),
      );
      break;
    case "github":
      writeOut(formatGithub(problems));
      break;
    default: {
      if (problems.length) writeErr(formatHuman(problems, sources, paint, { seeAll: "--format json" }));
      if (!failed && !output && checks.length === 0)
        for (const piece of written?.pieces ?? planPieces(result.plan!)) writeOut(piece);
    }
  }
  if (options.format !== "json") {
    // Paths and a plan's inventory label are outside text: escaped, as everywhere on the terminal.
    const e = escapeText;
    const where =
      checks.length > 0
        ? checked.length === checks.length && checked.every((c) => c.upToDate)
          ? checked.length === 1
            ? `${e(checked[0]!.check!)} is up to date`
            : `${checked.map((c) => `${e(c.check!)} (${e(c.label)})`).join(", ")} are up to date`
          : undefined
        : output
          ? `wrote ${e(output)}`
          : "plan on stdout";
    writeErr(summaryLine(result.plan, problems, failed || where === undefined, where ?? "", paint.bold));
  }
  return failed ? EXIT.problems : EXIT.ok;
}

/**
 * Write the plan to `output`, streamed a pipeline at a time (a big plan's text is never held
 * whole, plan-text.ts), unless it passes the size run reads (plan-size.ts): then nothing is
 * written and its size so far comes back as `tooLarge`. A plan for stdout is measured before any
 * of it goes out, so a reader never gets the first 128 MiB of one; up to KEEP_STDOUT_BYTES of it
 * is kept as measured (`pieces`) and written from there, not serialised a second time. `--check`
 * compares, and writes nothing.
 */
async function writePlanWithinLimit(
  plan: GpuplanPlan,
  output: string | undefined,
  checking: boolean,
): Promise<{ tooLarge?: number; pieces?: string[] }> {
  if (output === undefined) {
    if (checking) return {};
    const { bytes, pieces } = planBytesUpToLimit(planPieces(plan), KEEP_STDOUT_BYTES);
    return bytes > MAX_PLAN_BYTES ? { tooLarge: bytes } : { pieces };
  }
  try {
    await writeUserFile(output, withinPlanLimit(planPieces(plan)), "plan");
    return {};
  } catch (e) {
    if (e instanceof PlanTooLarge) return { tooLarge: e.bytes };
    throw e;
  }
}

/**
 * One compile per plan checked (each against the inventory it records, unless one is named), or
 * one for -o / stdout. The loaded pipeline file stays here: once the plans are made it is let go,
 * before a big plan is written (docs/decisions/0015-compact-plans.md).
 */
async function compileEach(
  file: string,
  options: CompileOptions,
  output: string | undefined,
  checks: string[],
): Promise<{ compiles: Compiled[]; history: History | undefined; big: boolean }> {
  const loaded =
    file === "-"
      ? checkPipelineText(STDIN_NAME, await readStdinText("pipeline file"))
      : await loadPipelineFile(file);
  // A big file leaves its parsed document behind: collect it before the plans are made.
  const big = loaded.source.text.length > BIG_INPUT_CHARS;
  if (big) await collectGarbage();
  const fromStdin = file === "-";
  const history = options.history ? await readRuns(options.history, file, loaded) : undefined;
  const compiles: Compiled[] = [];
  for (const check of checks.length > 0 ? checks : [undefined]) {
    // Read once, as any input is (a device refused, a size cap): it chooses the inventory too.
    const current = check === undefined ? undefined : await readSourceText(check, "plan");
    const choice = await chooseInventory(options, file, check, current);
    const result = compilePlan(loaded, choice, {
      planDir: planFolder(file, output, check),
      fromStdin,
      ...(history && { history }),
    });
    const strict = options.strict
      ? result.problems.map((p) => ({ ...p, severity: "error" as const }))
      : result.problems;
    const compiled: Compiled = {
      check,
      label: choice.label,
      flag: inventoryFlag(choice),
      result,
      problems: strict,
    };
    if (current !== undefined && !hasErrors(strict) && result.planText !== undefined) {
      compiled.upToDate = current === result.planText;
      if (!compiled.upToDate)
        compiled.problems = [
          ...strict,
          checkProblem(check!, current, result.planText, file, compiled.flag, options.history),
        ];
    }
    compiles.push(compiled);
  }
  return { compiles, history, big };
}

interface Compiled {
  check: string | undefined;
  /** The plan's inventory label (target:NAME, file:PATH, detect). */
  label: string;
  /** The compile flag that names that inventory, for hints (` --target dgx-h100`). */
  flag: string;
  result: CompileResult;
  problems: Problem[];
  upToDate?: boolean;
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

/** Which runs compile learned from and how many steps it learned (a failed compile too), on stderr. */
function historyLines(history: History, learnedSteps: number, refs: string[]): string {
  // Notes quote run folders' own records (paths, names): outside text.
  const lines = history.notes.map((n) => `history: ${escapeText(n)}`);
  const auto = refs.length === 1 && refs[0] === "auto";
  if (history.runs.length === 0) {
    lines.push(
      `history: no runs to learn from${auto ? " (no run of this pipeline file in the runs folder)" : ""}; the file's estimates are used`,
    );
  } else {
    lines.push(
      `history: learned ${count(learnedSteps, "step")} from ${count(history.runs.length, "run")}` +
        `${auto ? " (auto: the newest of this pipeline file)" : ""}: ${history.runs.join(", ")}`,
    );
  }
  return `${lines.join("\n")}\n`;
}

/**
 * The inventory to compile against: --inventory, --target, else (checking a plan) the one the plan
 * records — so `--check plans/*.json` checks each plan against its own target — else live detection.
 */
async function chooseInventory(
  options: CompileOptions,
  file: string,
  check: string | undefined,
  checkText: string | undefined,
): Promise<InventoryChoice> {
  if (options.inventory) return loadInventoryFile(options.inventory);
  const recorded = check === undefined ? undefined : recordedInventory(check, checkText!, options.target);
  if (recorded !== undefined && options.target === undefined && !INVENTORY_LABEL.test(recorded))
    return unknownLabelChoice(check!, checkText!, recorded);
  const target =
    options.target ?? (recorded?.startsWith("target:") ? recorded.slice("target:".length) : undefined);
  if (target !== undefined) {
    const { targetFolders } = await import("../../inventory/custom-targets.js");
    const projects = [...(file === "-" ? [] : [dirname(file)]), "."];
    return chooseTarget(target, targetFolders(options.targetsDir, projects));
  }
  if (recorded?.startsWith("file:"))
    return loadInventoryFile(recordedInventoryFile(check!, recorded.slice("file:".length)));
  // Live detection: imported only here, so `compile --target` never loads it.
  const { detectInventory } = await import("../../detect/index.js");
  return {
    inventory: await detectInventory({ lockDir: options.lockDir, cudaOnlyIfNeeded: true }),
    label: "detect",
    problems: [],
  };
}

/** What an `inventory.label` may be, as the plan schema describes it: target:NAME, file:PATH or detect. */
const INVENTORY_LABEL = /^(?:target:|file:|detect$)/;

/**
 * A plan under --check whose `inventory.label` names no inventory (`""`, a hand-edited word) is
 * said at that key: it fell through to detecting this machine, and the check then compared the
 * plan with an inventory it never named.
 */
function unknownLabelChoice(check: string, text: string, label: string): InventoryChoice {
  return {
    inventory: undefined,
    label,
    source: { file: check, text },
    problems: [
      error({
        code: "invalid-plan",
        message: `the plan records its inventory as "${displayText(label, 60)}", which names no target (target:NAME), file (file:PATH) or detect`,
        hint: "name the inventory: --target NAME or --inventory FILE, or write the plan again with gpuplan compile -o",
        file: check,
        pointer: "/inventory/label",
      }),
    ],
  };
}

/**
 * The `inventory.label` the plan under --check records. A file that is not a plan records none:
 * with --target naming the inventory the check itself says so (invalid-plan); without it there is
 * no inventory to compile against, and detecting this machine's would only add unrelated problems.
 */
function recordedInventory(check: string, text: string, target: string | undefined): string | undefined {
  let label: unknown;
  let plan = false;
  try {
    const data: unknown = JSON.parse(text);
    plan = looksLikePlanData(data);
    if (plan) label = (data as { inventory?: { label?: unknown } }).inventory?.label;
  } catch {
    // Not JSON: as not a plan, below.
  }
  if (typeof label === "string") return label;
  if (target !== undefined) return undefined;
  if (plan)
    throw new UsageError(
      `${check} records no inventory (inventory.label), so gpuplan cannot tell what to check it against`,
      "invalid-plan",
      "name it: --target NAME or --inventory FILE, or write the plan again with gpuplan compile -o",
    );
  throw new UsageError(
    `${check} is not a gpuplan plan (schema ${PLAN_SCHEMA}), so there is nothing to check`,
    "invalid-plan",
    "--check takes a plan written by gpuplan compile -o PLAN; the pipeline file is the first argument",
  );
}

/**
 * The inventory file a plan under --check records (`file:PATH`, relative to the plan), read only
 * inside the current folder: the plan is data a pull request can change, and `compile --check` in
 * CI must not become a way to print the runner's other files (`file:../../.git-credentials`).
 */
function recordedInventoryFile(check: string, recorded: string): string {
  // From the plan's real folder, as compile records it and run reads it (plan-paths.ts): through a
  // linked folder, `..` from the link's spelling is another folder.
  const path = relative(".", resolve(realPlanFolder(check), recorded)) || ".";
  const here = realpathSync(".");
  let real: string;
  try {
    real = realpathSync(path);
  } catch {
    return path; // Not there: reading it says so.
  }
  if (real === here || real.startsWith(here === "/" ? "/" : `${here}/`)) return path;
  throw new UsageError(
    `${check} records its inventory as ${path}, which is outside the current folder; gpuplan reads it only when named`,
    "invalid-plan",
    `check against it with --inventory ${path}, or run from a folder that holds it`,
  );
}

/** The compile flag that names an inventory choice, for hints. */
function inventoryFlag(choice: InventoryChoice): string {
  if (choice.file !== undefined) return ` --inventory ${shellWord(choice.file)}`;
  if (choice.label.startsWith("target:"))
    return ` --target ${shellWord(choice.label.slice("target:".length))}`;
  return "";
}

/** The most run ids a stale-plan hint copies from the plan under --check (each is a run id's length). */
const MAX_RUNS_IN_HINT = 20;

/**
 * `--check PLAN` found a difference. The hint offers to rewrite PLAN only when PLAN is a plan: a
 * pipeline file or anything else passed by mistake must never be one copy-paste from overwritten.
 * It keeps learned values: this compile's --history, else the runs PLAN learned from.
 */
function checkProblem(
  check: string,
  current: string,
  planText: string,
  file: string,
  flag: string,
  history: string[] | undefined,
): Problem {
  if (!looksLikePlan(current)) {
    return error({
      code: "invalid-plan",
      message: `${check} is not a gpuplan plan (schema ${PLAN_SCHEMA}), so there is nothing to check`,
      hint: "--check takes a plan written by gpuplan compile -o PLAN; the pipeline file is the first argument",
      file: check,
    });
  }
  // The plan is outside data: only well-formed run ids go into a command line to copy, and only
  // a few (a plan may name `slurm-` and a megabyte of digits, or 50,000 runs; both patterns bound
  // an id's length, a Slurm job id being a 32-bit number).
  const learned = learnedRuns(JSON.parse(current));
  const wellFormed = (id: string) => RUN_ID_PATTERN.test(id) || SLURM_RUN_ID_PATTERN.test(id);
  const runs =
    history ?? (learned.length <= MAX_RUNS_IN_HINT && learned.every(wellFormed) ? learned : ["RUN…"]);
  // This compile's own --history words are the user's: quoted like the paths.
  const historyFlag =
    runs.length > 0 ? ` --history ${runs.map((r) => (r === "RUN…" ? r : shellWord(r))).join(" ")}` : "";
  return error({
    code: "stale-plan",
    message: `${check} is not what compile writes now: ${describeStaleness(current, planText)}`,
    hint: `run: gpuplan compile ${shellWord(file)}${flag}${historyFlag} -o ${shellWord(check)}${file === "-" ? " with the pipeline on stdin" : ""}`,
    file: check,
  });
}

function looksLikePlan(text: string): boolean {
  try {
    return looksLikePlanData(JSON.parse(text));
  } catch {
    return false;
  }
}

function looksLikePlanData(data: unknown): boolean {
  return typeof data === "object" && data !== null && "schema" in data && isPlanSchema(data.schema);
}

/** `-o` naming the pipeline, the inventory or the plan under --check would destroy an input. */
async function refuseToOverwriteInputs(
  output: string,
  inputs: readonly (string | undefined)[],
): Promise<void> {
  const target = realpathOrNull(output);
  if (target === null) return;
  for (const input of inputs) {
    if (input === undefined || input === "-") continue;
    if (realpathOrNull(input) === target) {
      throw new UsageError(
        `-o ${output} is ${input}, an input of this compile: writing the plan there would destroy it`,
        "conflicting-options",
        "write the plan to its own file, e.g. -o plan.json",
      );
    }
  }
}

/** The file a `--target NAME` of a custom target reads (an input -o must not overwrite). */
async function customTargetFile(file: string, options: CompileOptions): Promise<string | undefined> {
  if (options.target === undefined || isBuiltInTarget(options.target)) return undefined;
  const { listCustomTargets, targetFolders, targetKey } = await import("../../inventory/custom-targets.js");
  const projects = [...(file === "-" ? [] : [dirname(file)]), "."];
  const name = targetKey(options.target);
  return listCustomTargets(targetFolders(options.targetsDir, projects)).find(
    (t) => t.name === name && !t.shadowed,
  )?.file;
}

const count = (n: number, noun: string): string => `${n} ${noun}${n === 1 ? "" : "s"}`;

/** The term of the lower bound that binds, in words. */
const BOUND_WORDS: Record<GpuplanPlan["summary"]["lowerBoundBy"], string> = {
  "longest-pipeline": "longest pipeline",
  "gpu-slots": "GPU slots",
  "gpu-memory": "GPU memory",
  "host-lanes": "host lanes",
};

function summaryLine(
  plan: GpuplanPlan | undefined,
  problems: Problem[],
  failed: boolean,
  where: string,
  bold: (s: string) => string,
): string {
  if (failed || !plan) return `${bold("gpuplan compile:")} ${countLine(problems)}; no plan written\n`;
  const s = plan.summary;
  const ratio =
    s.lowerBoundMs > 0
      ? ` (${(s.makespanMs / s.lowerBoundMs).toFixed(2)}× lower bound: ${BOUND_WORDS[s.lowerBoundBy]})`
      : "";
  const onGpus = s.gpuPipelines > 0 ? `${s.gpuPipelines} on ${count(plan.registry.length, "GPU")}` : "";
  const onCpu = s.cpuPipelines > 0 ? (s.gpuPipelines > 0 ? `${s.cpuPipelines} on CPU` : "all on CPU") : "";
  const split = [onGpus, onCpu].filter(Boolean).join(", ");
  return (
    `${bold("gpuplan compile:")} ${count(s.pipelines, "pipeline")}${split ? ` (${split})` : ""}, ` +
    `est. makespan ${formatDuration(s.makespanMs)}${ratio}; ${countLine(problems)}; ${where}\n`
  );
}

function realpathOrNull(path: string): string | null {
  try {
    return realpathSync(path);
  } catch {
    return null;
  }
}
