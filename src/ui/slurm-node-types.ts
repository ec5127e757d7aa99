/**
 * `gpuplan detect --slurm` for a person: one block per node type, then how to plan for one. Names
 * of partitions, nodes, node types and GPU models are Slurm's answers: escaped.
 */
import type { SlurmNodeTypesReport } from "../slurm/read-cluster.js";
import { escapeText as e } from "../text/safe-text.js";
import { formatSize } from "../units/size.js";
import type { Paint } from "./paint.js";

const MAX_NODE_NAMES = 6;

export function formatSlurmNodeTypes(report: SlurmNodeTypesReport, paint: Paint): string {
  const out: string[] = [];
  const scope =
    report.partition !== null
      ? `partition ${e(report.partition)}`
      : `partitions you can submit to: ${report.partitions.map((p) => `${e(p.name)}${p.isDefault ? " (default)" : ""}${p.available === "up" ? "" : ` [${e(p.available)}]`}`).join(", ") || "none"}`;
  out.push(`${paint.bold("Slurm node types")} (${scope})`);
  for (const t of report.nodeTypes) {
    const names =
      t.nodes.slice(0, MAX_NODE_NAMES).map(e).join(", ") +
      (t.nodes.length > MAX_NODE_NAMES ? `, … ${t.nodes.length - MAX_NODE_NAMES} more` : "");
    const usable = t.usableNodes === t.nodes.length ? "" : `, ${t.usableNodes} usable now`;
    out.push(
      "",
      `${paint.bold(e(t.name))}  ${t.nodes.length} node${t.nodes.length === 1 ? "" : "s"}${usable}: ${names}`,
    );
    out.push(`  partitions  ${t.partitions.map(e).join(", ") || "-"}`);
    if (t.gpus.length === 0) out.push("  GPUs        none");
    for (const g of t.gpus) {
      const gres = `gres gpu${g.gresType === null ? "" : `:${e(g.gresType)}`}:${g.count}`;
      const model =
        g.model === null
          ? paint.yellow("unknown model")
          : `${e(g.model)}, ${formatSize(g.memoryBytes ?? 0)} each`;
      out.push(`  GPUs        ${g.count} × ${model} (${gres})`);
    }
    if (t.shardsPerGpu !== null)
      out.push(`  shards      ${t.shardsPerGpu} per GPU (--gres=shard:K shares a GPU)`);
    out.push(`  CPUs        ${t.cpus}`, `  memory      ${formatSize(t.memoryBytes)}`);
  }
  const plannable = report.nodeTypes.filter((t) => t.inventory !== null);
  if (plannable.length > 0) {
    const example = e(plannable[0]!.name);
    const pick = report.nodeTypes.length > 1 ? ` --node-type ${example}` : "";
    out.push(
      "",
      paint.dim(
        `plan for a node type: gpuplan detect --slurm${report.partition !== null ? ` --partition ${e(report.partition)}` : ""}${pick} --save ${example}.json`,
      ),
      paint.dim(
        `                      gpuplan compile pipeline.yaml --inventory ${example}.json -o plan.json`,
      ),
    );
  }
  return `${out.join("\n")}\n`;
}
