/**
 * Whether a Slurm run's jobs may still be queued or running, for `gpuplan runs --prune`: its
 * tasks write into its folder and a resume reads them from there, so the folder goes only once
 * Slurm says every task the run ever submitted (each array in slurm/jobs.json, resumes included)
 * has ended. Where Slurm cannot be asked, or no longer knows a task that never wrote its own end,
 * the answer is "it may", with why: a run kept by mistake costs disk, one removed under a running
 * task loses its results.
 */
import { type CommandOutput, noAnswer, type RunCommand } from "../read-cluster.js";
import { hasTaskEnded, readSlurmRecord } from "./run-record.js";
import { sacctTaskStates } from "./sacct-tasks.js";
import { forgetsEveryJob, isFinalState, parseSqueue, squeueCalls } from "./squeue-tasks.js";

/** Why the run's Slurm jobs may not all have ended; null when Slurm (or each task itself) says they have. */
export async function whySlurmJobsMayRun(runDir: string, slurm: RunCommand): Promise<string | null> {
  let arrays: { job: string; pipelines: string[] }[];
  try {
    arrays = (await readSlurmRecord(runDir)).arrays;
  } catch {
    return "its slurm/jobs.json is damaged: gpuplan cannot tell which Slurm jobs are its";
  }
  const tasks = arrays.flatMap((a) => a.pipelines.map((_, i) => `${a.job}_${i}`));
  if (tasks.length === 0) return null;
  const jobs = [...new Set(arrays.map((a) => a.job))];
  // Only the run's own arrays, below their task counts, are expanded from squeue's ranges.
  const taskCounts = new Map(arrays.map((a) => [a.job, a.pipelines.length]));
  const states = new Map<string, string>();
  for (const args of squeueCalls(jobs)) {
    const queue = await slurm("squeue", args);
    if (queue.status === 0)
      for (const s of parseSqueue(queue.stdout, taskCounts)) states.set(`${s.job}_${s.task}`, s.state);
    else if (!forgetsEveryJob(queue))
      return `${failure("squeue", queue)}: gpuplan cannot ask Slurm whether its jobs (${list(jobs)}) ended`;
  }
  // Tasks squeue no longer lists (MinJobAge): Slurm's accounting, where configured.
  const forgotten = tasks.filter((t) => !states.has(t));
  const sacct = await sacctTaskStates(
    slurm,
    forgotten.map((name) => ({ name, rawJob: null })),
  );
  for (const [name, s] of sacct.states) states.set(name, s.state);
  const active = tasks.filter((t) => states.has(t) && !isFinalState(states.get(t)!));
  if (active.length > 0)
    return `Slurm still has ${active.length === 1 ? "its job" : "its jobs"} ${list(active.map((t) => `${t} ${states.get(t)}`))}`;
  const unknown: string[] = [];
  for (const t of tasks) if (!states.has(t) && !(await hasTaskEnded(runDir, t))) unknown.push(t);
  if (unknown.length === 0) return null;
  // A sacct that did not answer is not one that has no record: say which it was.
  const sacctSaid = sacct.unanswered ?? "sacct has no record";
  return `Slurm no longer knows ${list(unknown)} (squeue does not list ${unknown.length === 1 ? "it" : "them"}, ${sacctSaid}) and ${unknown.length === 1 ? "it" : "they"} never wrote an end: remove the folder by hand once you know ${unknown.length === 1 ? "it has" : "they have"} ended`;
}

function failure(command: string, out: CommandOutput): string {
  if (out.failure === "not-found") return `${command} is not on PATH`;
  if (out.failure === "timeout") return `${command} ${noAnswer(out)}`;
  const said = out.stderr.trim().split("\n").at(-1) ?? "";
  return `${command} failed (${out.status === null ? (out.failure ?? "no exit status") : `exit ${out.status}`}${said ? `: ${said.slice(0, 200)}` : ""})`;
}

const list = (items: readonly string[]): string =>
  `${items.slice(0, 5).join(", ")}${items.length > 5 ? `, … (${items.length} in all)` : ""}`;
