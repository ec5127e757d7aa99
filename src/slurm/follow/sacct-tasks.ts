/**
 * How tasks that squeue no longer lists ended (a finished job leaves squeue after MinJobAge, 300 s
 * by default): Slurm's accounting (`sacct -X`, where slurmdbd is configured) knows array tasks as
 * JOB_TASK; where it is not (`sacct` says accounting storage is disabled), the job completion log
 * (`sacct -c`, JobCompType=jobcomp/filetxt) knows each task by its own job id only, which squeue
 * said while it listed the task. Where neither answers, the last state squeue said stands.
 */
import { type CommandOutput, noAnswer, type RunCommand } from "../read-cluster.js";
import type { TaskState } from "./squeue-tasks.js";

const FIELDS = "JobID,State,ExitCode,NodeList";

export interface ForgottenTask {
  /** `JOB_TASK`. */
  name: string;
  /** The task's own job id, when squeue said it. */
  rawJob: string | null;
}

/**
 * Job ids per sacct call: one `-j` argument of 100,000 task ids (~800 KB) is past Linux's 128 KiB
 * limit on one argument (E2BIG), and sacct parses its list once per call — squeue-tasks.ts's
 * JOBS_PER_CALL for the same reason.
 */
const JOBS_PER_CALL = 1000;

export interface SacctAnswer {
  /** The final states sacct knows, by `JOB_TASK`; tasks it does not know are missing. */
  states: Map<string, TaskState>;
  /**
   * `sacct did not answer in 15 s` (or was not there) when a call that would have been asked
   * got no answer: the tasks missing from `states` are then not known to have no record.
   */
  unanswered: string | null;
}

/** What sacct knows of how `tasks` ended. */
export async function sacctTaskStates(
  slurm: RunCommand,
  tasks: readonly ForgottenTask[],
): Promise<SacctAnswer> {
  const states = new Map<string, TaskState>();
  if (tasks.length === 0) return { states, unanswered: null };
  const arrays = [...new Set(tasks.map((t) => t.name.split("_")[0]!))];
  const accounted = await sacctEach(slurm, ["-n", "-P", "-X"], arrays);
  if (typeof accounted === "string") {
    const wanted = new Set(tasks.map((t) => t.name));
    for (const s of parseSacct(accounted)) if (wanted.has(s.id)) states.set(s.id, s.state);
    return { states, unanswered: null };
  }
  // sacct -X failing by itself (accounting storage disabled) is an answer: ask the completion log.
  // One that did not answer would not answer -c either.
  if (accounted.unanswered !== null) return { states, unanswered: accounted.unanswered };
  const byRaw = new Map(tasks.filter((t) => t.rawJob !== null).map((t) => [t.rawJob!, t.name]));
  if (byRaw.size === 0) return { states, unanswered: null };
  const completed = await sacctEach(slurm, ["-c", "-n", "-P"], [...byRaw.keys()]);
  if (typeof completed !== "string") return { states, unanswered: completed.unanswered };
  for (const s of parseSacct(completed)) {
    const name = byRaw.get(s.id);
    if (name !== undefined) states.set(name, { ...s.state, ...splitName(name) });
  }
  return { states, unanswered: null };
}

/**
 * sacct's lines for every job in `jobs`, JOBS_PER_CALL at a time; when a call failed, whether it
 * answered (an exit status of its own) or not (past its time limit, not on PATH, too much output).
 */
async function sacctEach(
  slurm: RunCommand,
  flags: readonly string[],
  jobs: readonly string[],
): Promise<string | { unanswered: string | null }> {
  let stdout = "";
  for (let i = 0; i < jobs.length; i += JOBS_PER_CALL) {
    const out = await slurm("sacct", [
      ...flags,
      "-j",
      jobs.slice(i, i + JOBS_PER_CALL).join(","),
      "-o",
      FIELDS,
    ]);
    if (out.status !== 0) return { unanswered: unansweredSacct(out) };
    stdout += `${out.stdout}\n`;
  }
  return stdout;
}

function unansweredSacct(out: CommandOutput): string | null {
  if (out.failure === "timeout") return `sacct ${noAnswer(out)}`;
  if (out.failure === "not-found") return "sacct is not on PATH";
  if (out.failure === "output-too-large") return "sacct printed more than gpuplan reads";
  return null;
}

/** `JobID|State|ExitCode|NodeList` lines: State may say `CANCELLED by 1000`, ExitCode is `exit:signal`. */
export function parseSacct(text: string): { id: string; state: TaskState }[] {
  const out: { id: string; state: TaskState }[] = [];
  for (const line of text.split("\n")) {
    const [id = "", stateText = "", exit = "", node = ""] = line.trim().split("|");
    const state = /^[A-Z_]+/.exec(stateText)?.[0];
    const code = /^([0-9]+):([0-9]+)$/.exec(exit);
    if (!/^[0-9]+(_[0-9]+)?$/.test(id) || !state || !code) continue;
    const signal = Number(code[2]);
    out.push({
      id,
      state: {
        ...splitName(id),
        state,
        reason: null,
        node: node === "" || node === "None assigned" ? null : node,
        exitCode: signal === 0 ? Number(code[1]) : null,
        signal: signal === 0 ? null : signal,
      },
    });
  }
  return out;
}

function splitName(name: string): { job: string; task: number } {
  const [job = "", task = "0"] = name.split("_");
  return { job, task: Number(task) };
}
