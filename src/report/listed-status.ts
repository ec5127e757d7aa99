/**
 * A Slurm run's status for its report, as `gpuplan runs` lists it (list-runs.ts's describeRun, the
 * one decision): a report reads a run's end from a run.end in events.jsonl, which an exported
 * array's `slurm-JOB` and a detached run never have — each task writes its own into
 * slurm/events/, and only the runs listing (through slurm/follow/run-standing.ts) weighs those,
 * asking Slurm about tasks that have not said. Without this a finished array read "unfinished"
 * in its report and "ok" or "failed" in `gpuplan runs`.
 */
import { lstat } from "node:fs/promises";
import { join } from "node:path";
import { describeRun, type RunInUse } from "../runs/list-runs.js";
import type { RunStatus } from "../schema-types/runs.js";
import { slurmFolderDamage } from "../slurm/follow/slurm-folder.js";
import type { RunCommand } from "../slurm/read-cluster.js";

export interface ListedStatus {
  status: RunStatus;
  /** What `gpuplan runs` says of the run beside its status (why it is submitted, what Slurm forgot). */
  problem: string | null;
}

/**
 * How `gpuplan runs` lists the run in `runDir` (named `id`) when it went to Slurm (it has
 * slurm/); null for a local run, whose events say how it ended, and for a Slurm run
 * whose journal or jobs.json is damaged: the report reads its events all the same, and says what
 * it could not read. Something other than a folder at slurm/ is damage the events cannot outweigh
 * (the tasks' own are behind it): the run is damaged, as runs lists it, not local.
 */
export async function readListedStatus(
  runDir: string,
  id: string,
  inUse?: RunInUse,
  slurm?: RunCommand,
): Promise<ListedStatus | null> {
  const damagedFolder = slurmFolderDamage(runDir) !== null;
  // slurm/ without jobs.json is a Slurm run too: its submission failed (or gpuplan was stopped in
  // it) before a record named its jobs, and it has no events to say so.
  if (!damagedFolder && !(await lstat(join(runDir, "slurm")).catch(() => null))) return null;
  const listed = await describeRun(runDir, id, inUse, slurm);
  return listed.status === "damaged" && !damagedFolder
    ? null
    : { status: listed.status, problem: listed.problem };
}
