/** `gpuplan runs [--json] [--prune --keep N]`: the runs in .gpuplan/runs, and removing old ones. */

import { accessSync, constants } from "node:fs";
import { delimiter, join } from "node:path";
import { UsageError } from "../../problems/errors.js";
import { EXIT } from "../../problems/exit-codes.js";
import { RUNS_DIR } from "../../run/record/journal.js";
import { checkWorkingFolder } from "../../run/record/working-folder.js";
import { listRuns, type RunInUse, type RunListing } from "../../runs/list-runs.js";
import { pruneRuns } from "../../runs/prune-runs.js";
import type { GpuplanRuns, PruneResult } from "../../schema-types/runs.js";
import type { RunCommand } from "../../slurm/read-cluster.js";
import { jsonText } from "../../text/json-text.js";
import { formatPruned, formatRuns } from "../../ui/runs-table.js";
import { writeErr, writeOut } from "../output.js";
import { paintFor } from "../paint.js";

export interface RunsOptions {
  json?: boolean;
  prune?: boolean;
  keep?: number;
}

export default async function runs(options: RunsOptions): Promise<number> {
  if (options.prune && options.keep === undefined)
    throw new UsageError(
      "--prune needs --keep N: how many of the newest runs to keep",
      "missing-argument",
      "e.g. gpuplan runs --prune --keep 20",
    );
  if (!options.prune && options.keep !== undefined)
    throw new UsageError("--keep goes with --prune", "conflicting-options", "gpuplan runs --prune --keep N");
  // A run whose folder lock a gpuplan holds is running: listed so, never pruned; nor is one whose
  // gpuplan was killed while a step of it still runs, nor a Slurm run whose jobs Slurm still has.
  const { isRunInUse, isRunOrStepAlive } = await import("../../run/record/run-lock.js");
  // Asked only of Slurm runs no gpuplan follows whose tasks have not all said how they ended, and
  // one Slurm for the listing and the prune: a command that did not answer is asked once in all.
  const { QUESTION_TIMEOUT_MS, rememberUnanswered, slurmCommandRunner } = await import(
    "../../slurm/run-slurm-command.js"
  );
  const slurm = rememberUnanswered(slurmCommandRunner(process.env, QUESTION_TIMEOUT_MS));
  const all = await listRuns(RUNS_DIR, isRunInUse, slurm, slurmClientsHere(process.env));
  if (all.length === 0) checkWorkingFolder();
  const pruned = options.prune ? await prune(all, options.keep!, isRunOrStepAlive, slurm) : undefined;
  const left = pruned ? all.filter((r) => !pruned.removed.includes(r.id)) : all;
  if (options.json) {
    const doc: GpuplanRuns = {
      schema: "gpuplan/runs@2",
      runsDir: RUNS_DIR,
      runs: left,
      ...(pruned && { pruned }),
    };
    writeOut(`${jsonText(doc, 2)}\n`);
  } else {
    if (pruned) writeErr(formatPruned(pruned, all, await paintFor()));
    writeOut(formatRuns(left, RUNS_DIR, await paintFor("stdout")));
  }
  return pruned?.errors.length ? EXIT.usage : EXIT.ok;
}

/** Prune with the run-level lock and, for runs that went to Slurm, Slurm's own account of their jobs. */
async function prune(
  all: RunListing[],
  keep: number,
  inUse: RunInUse,
  slurm: RunCommand,
): Promise<PruneResult> {
  const { whySlurmJobsMayRun } = await import("../../slurm/follow/run-activity.js");
  return pruneRuns(all, keep, { inUse, slurmJobsMayRun: (dir) => whySlurmJobsMayRun(dir, slurm) });
}

/** Whether squeue and sbatch, which a resume on Slurm runs, are on PATH. */
function slurmClientsHere(env: NodeJS.ProcessEnv): boolean {
  const dirs = (env.PATH ?? "").split(delimiter).filter((d) => d !== "");
  const found = (command: string) =>
    dirs.some((d) => {
      try {
        accessSync(join(d, command), constants.X_OK);
        return true;
      } catch {
        return false;
      }
    });
  return found("squeue") && found("sbatch");
}
