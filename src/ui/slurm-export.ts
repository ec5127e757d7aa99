/** What `gpuplan export --to slurm` wrote, for a person: one line per job array, then how to submit. */
import type { ExportedArray } from "../slurm/export-plan.js";
import { escapeText } from "../text/safe-text.js";
import { formatTable } from "./table.js";

const COLUMNS = [{ header: "SCRIPT" }, { header: "TASKS" }, { header: "SBATCH" }];

export function formatSlurmExport(
  arrays: readonly ExportedArray[],
  outDir: string,
  nodeType: string | null,
  pipelines: number,
): string {
  // The folder is the user's path, the node type a name Slurm gave: escaped.
  const dir = escapeText(outDir);
  const rows = arrays.map((a) => [
    a.script,
    `${a.pipelines.length} task${a.pipelines.length === 1 ? "" : "s"}`,
    [
      a.gres !== null ? `--gres=${a.gres}` : "",
      `--cpus-per-task=${a.cpusPerTask}`,
      a.memMiB !== null ? `--mem=${a.memMiB}M` : "",
      `--time=${a.time}`,
    ]
      .filter(Boolean)
      .join(" "),
  ]);
  return [
    `gpuplan export: ${arrays.length} job array${arrays.length === 1 ? "" : "s"} for ${pipelines} pipeline${pipelines === 1 ? "" : "s"} in ${dir}${nodeType ? ` (${escapeText(nodeType)})` : ""}`,
    ...formatTable(COLUMNS, rows, { indent: "  ", header: false }),
    `submit: ${dir}/submit.sh`,
    "",
  ].join("\n");
}
