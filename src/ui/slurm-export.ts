/** What `gpuplan export --to slurm` wrote, for a person: one line per job array, then how to submit. */
import type { ExportedArray } from "../slurm/export-plan.js";

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
  const widths = [0, 1].map((i) => Math.max(...rows.map((r) => r[i]!.length)));
  return [
    `gpuplan export: ${arrays.length} job array${arrays.length === 1 ? "" : "s"} for ${pipelines} pipeline${pipelines === 1 ? "" : "s"} in ${outDir}${nodeType ? ` (${nodeType})` : ""}`,
    ...rows.map((r) => `  ${r[0]!.padEnd(widths[0]!)}  ${r[1]!.padEnd(widths[1]!)}  ${r[2]}`),
    `submit: ${outDir}/submit.sh`,
    "",
  ].join("\n");
}
