/**
 * `gpuplan detect --slurm`: the cluster's node types (GPU model and count from the GRES type,
 * CPUs, memory) as a table, as JSON (--json, schema gpuplan/slurm-node-types@1), and one node
 * type's inventory for `compile --inventory` (--save FILE, --node-type NAME when there are several).
 */

import { UsageError } from "../../problems/errors.js";
import { toReportedProblem } from "../../problems/reported-problem.js";
import { GPU_MODELS, modelForGresType } from "../../slurm/gpu-models.js";
import type { GpuModelChoice } from "../../slurm/node-types.js";
import { readSlurmNodeTypes } from "../../slurm/read-cluster.js";
import { slurmCommandRunner } from "../../slurm/run-slurm-command.js";
import { jsonText } from "../../text/json-text.js";
import { escapeText } from "../../text/safe-text.js";
import { shellWord } from "../../text/shell-word.js";
import { formatHuman } from "../../ui/problems/human.js";
import { formatSlurmNodeTypes } from "../../ui/slurm-node-types.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";
import { isStdoutPath, writeUserFile } from "../write-file.js";

export interface DetectSlurmOptions {
  slurm?: boolean;
  json?: boolean;
  save?: string;
  all?: boolean;
  /** Parsed and bounded by the CLI (arg-parsers.ts). */
  timeout: number;
  partition?: string;
  nodeType?: string;
  gpuModel?: string[];
}

export default async function detectSlurm(options: DetectSlurmOptions): Promise<number> {
  if (!options.slurm) {
    throw new UsageError(
      "--partition, --node-type and --gpu-model describe a Slurm cluster's nodes",
      "conflicting-options",
      "add --slurm",
    );
  }
  if (options.all)
    throw new UsageError("--all applies to this machine's GPUs, not to --slurm", "conflicting-options");
  const timeoutMs = options.timeout;
  const report = await readSlurmNodeTypes(slurmCommandRunner(process.env, timeoutMs), {
    ...(options.partition !== undefined && { partition: options.partition }),
    gpuModels: (options.gpuModel ?? []).map(parseGpuModelChoice),
  });
  if (options.nodeType !== undefined) {
    const names = report.nodeTypes.map((t) => t.name);
    if (!names.includes(options.nodeType)) {
      throw new UsageError(
        `--node-type: no node type \`${options.nodeType}\``,
        "unknown-node-type",
        `node types: ${names.join(", ") || "none"}`,
      );
    }
    report.nodeTypes = report.nodeTypes.filter((t) => t.name === options.nodeType);
  }
  const paint = await paintFor();
  // `--save -` (or /dev/stdout): the chosen inventory is stdout's one result, not the report too.
  const toStdout = options.save !== undefined && isStdoutPath(options.save);
  if (!toStdout) {
    if (options.json)
      writeOut(`${jsonText({ ...report, problems: report.problems.map(toReportedProblem) }, 2)}\n`);
    else writeOut(formatSlurmNodeTypes(report, await paintFor("stdout")));
  }
  if (report.problems.length) writeErr(formatHuman(report.problems, [], paint));
  if (options.save === undefined) return 0;

  if (report.nodeTypes.length !== 1) {
    throw new UsageError(
      `--save writes one node type's inventory, and there are ${report.nodeTypes.length}`,
      "ambiguous-node-type",
      report.nodeTypes.length
        ? `pick one: --node-type ${report.nodeTypes.map((t) => t.name).join(" | ")}`
        : "check --partition",
    );
  }
  const chosen = report.nodeTypes[0]!;
  if (!chosen.inventory) {
    writeErr(
      `gpuplan: no inventory written: the GPU model of node type ${escapeText(chosen.name)} is unknown (see above)\n`,
    );
    return 1;
  }
  if (toStdout) {
    writeOut(`${jsonText(chosen.inventory, 2)}\n`);
    return 0;
  }
  await writeUserFile(options.save, `${jsonText(chosen.inventory, 2)}\n`, "inventory");
  writeErr(
    `gpuplan: wrote ${escapeText(options.save)}: node type ${escapeText(chosen.name)}, for gpuplan compile --inventory ${escapeText(shellWord(options.save))}\n`,
  );
  return 0;
}

/** `--gpu-model [TYPE=]MODEL`: MODEL is one of the table's GRES types (h100, a100, …) or its NVML name. */
function parseGpuModelChoice(text: string): GpuModelChoice {
  const eq = text.lastIndexOf("=");
  const type = eq >= 0 ? text.slice(0, eq) : null;
  const modelName = eq >= 0 ? text.slice(eq + 1) : text;
  const model = GPU_MODELS.find((m) => m.name === modelName) ?? modelForGresType(modelName);
  if (!model || type === "") {
    throw new UsageError(
      `--gpu-model ${text}: ${model ? "the GRES type before = is empty" : `\`${modelName}\` is no GPU model gpuplan knows`}`,
      "unknown-gpu-model",
      `use [GRES_TYPE=]MODEL with MODEL one of ${GPU_MODELS.map((m) => m.gresType).join(", ")}`,
    );
  }
  return { gresType: type, model };
}
