/** What `gpuplan export --to slurm` wrote, for a person: one line per job array, then how to submit. */
import type { ExportedArray } from "../slurm/export-plan.js";
import { formatTable } from "./table.js";

const COLUMNS = [{ header: "SCRIPT" }, { header: "TASKS" }, { header: "SBATCH" }];

export function formatSlurmExport(
  arrays: readonly ExportedArray[],
  outDir: string,
  nodeType: string | null,
  pipelines: number,
): string {
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
    `gpuplan export: ${arrays.length} job array${arrays.length === 1 ? "" : "s"} for ${pipelines} pipeline${pipelines === 1 ? "" : "s"} in ${outDir}${nodeType ? ` (${nodeType})` : ""}`,
    ...formatTable(COLUMNS, rows, { indent: "  ", header: false }),
    `submit: ${outDir}/submit.sh`,
    "",
  ].join("\n");
}
