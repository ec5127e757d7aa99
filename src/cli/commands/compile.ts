/** `gpuplan compile FILE`: parse options, call the core, pick the output, set the exit code. */
import { readFile } from "node:fs/promises";
import { compilePlan } from "../../compile/compile.js";
import { type InventoryChoice, loadInventoryFile, targetInventory } from "../../inventory/load-inventory.js";
import { loadPipelineFile } from "../../pipeline/load-pipeline.js";
import { describeStaleness } from "../../plan/staleness.js";
import { writeFileAtomic } from "../../plan/write-atomic.js";
import { EXIT, UsageError } from "../../problems/errors.js";
import { error, hasErrors, type Problem } from "../../problems/problem.js";
import type { GpuplanPlan } from "../../schema-types/plan.js";
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
}

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
  const loaded = await loadPipelineFile(file);
  const choice = await chooseInventory(options);
  const result = compilePlan(loaded, choice);
  let problems = result.problems;
  if (options.strict) problems = problems.map((p) => ({ ...p, severity: "error" as const }));
  const ok = !hasErrors(problems) && result.planText !== undefined;

  let upToDate: boolean | undefined;
  if (ok && options.check) {
    const current = await readFile(options.check, "utf8").catch(() => {
      throw new UsageError(`cannot read plan ${options.check}`, "unreadable-file");
    });
    upToDate = current === result.planText;
    if (!upToDate) {
      problems = [
        ...problems,
        error({
          code: "stale-plan",
          message: `${options.check} is not what compile writes now: ${describeStaleness(current, result.planText!)}`,
          hint: `run: gpuplan compile ${file}${choiceFlag(options)} -o ${options.check}`,
          file: options.check,
        }),
      ];
    }
  }
  if (ok && options.output) await writeFileAtomic(options.output, result.planText!);

  const failed = hasErrors(problems);
  const paint = await paintFor();
  switch (options.format) {
    case "json":
      writeOut(
        formatJson({
          ok: !failed,
          problems,
          output: ok && options.output ? options.output : null,
          check: options.check && upToDate !== undefined ? { plan: options.check, upToDate } : null,
          plan: ok && !options.output && !options.check ? result.plan! : null,
        }),
      );
      break;
    case "github":
      writeOut(formatGithub(problems));
      break;
    default: {
      if (problems.length) writeErr(formatHuman(problems, result.sources, paint));
      if (ok && !options.output && !options.check) writeOut(result.planText!);
    }
  }
  if (options.format !== "json") writeErr(summaryLine(result.plan, problems, failed, options, paint.bold));
  return failed ? EXIT.problems : EXIT.ok;
}

async function chooseInventory(options: CompileOptions): Promise<InventoryChoice> {
  if (options.inventory) return loadInventoryFile(options.inventory);
  if (options.target) return targetInventory(options.target);
  // Live detection: imported only here, so `compile --target` never loads it.
  const { detectInventory } = await import("../../detect/index.js");
  return { inventory: await detectInventory(), label: "detect", problems: [] };
}

const choiceFlag = (o: CompileOptions): string =>
  o.inventory ? ` --inventory ${o.inventory}` : o.target ? ` --target ${o.target}` : "";

function summaryLine(
  plan: GpuplanPlan | undefined,
  problems: Problem[],
  failed: boolean,
  options: CompileOptions,
  bold: (s: string) => string,
): string {
  if (failed || !plan) return `${bold("gpuplan compile:")} ${countLine(problems)}; no plan written\n`;
  const s = plan.summary;
  const ratio = s.lowerBoundMs > 0 ? ` (${(s.makespanMs / s.lowerBoundMs).toFixed(2)}× lower bound)` : "";
  const where = options.check
    ? `${options.check} is up to date`
    : options.output
      ? `wrote ${options.output}`
      : "plan on stdout";
  return (
    `${bold("gpuplan compile:")} ${s.pipelines} pipelines (${s.gpuPipelines} on ${plan.registry.length} GPUs, ${s.cpuPipelines} on CPU), ` +
    `est. makespan ${formatDuration(s.makespanMs)}${ratio}; ${countLine(problems)}; ${where}\n`
  );
}
