/**
 * The run directory `.gpuplan/runs/<run-id>/`: `plan.json` (the exact plan being run, so a resume
 * runs the same plan even when the pipeline file was compiled in memory), `journal.jsonl` (one
 * line per finished step attempt, appended and flushed to disk before the step is reported done),
 * `events.jsonl` (telemetry) and the step logs, `logs/<pipeline>@<step>.out.log` and `.err.log`.
 */
import { mkdir, open, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";
import type { GpuplanPlan } from "../../schema-types/plan.js";
import type { StepStatus } from "./events.js";

export const RUNS_DIR = join(".gpuplan", "runs");

interface JournalHeader {
  type: "run";
  run: string;
  startedAt: string;
  /** The plan file (or pipeline file) the run was started from, as given. */
  input: string;
  /** Directory step `cwd`s are resolved against (absolute). */
  baseDir: string;
  pipelines: string[];
}

interface JournalStep {
  type: "step";
  ts: string;
  pipeline: string;
  step: string;
  status: StepStatus | "skipped";
  attempt: number;
  device: string;
  exitCode: number | null;
  durationMs: number;
}

interface JournalEnd {
  type: "end";
  ts: string;
  interrupted: boolean;
  ok: number;
  failed: number;
  skipped: number;
}

type JournalEntry = JournalHeader | JournalStep | JournalEnd;

/** Appends in order; an append resolves once its entry is on disk (fdatasync). */
export interface Journal {
  append(entry: JournalEntry): Promise<void>;
  close(): Promise<void>;
}

export async function openJournal(runDir: string): Promise<Journal> {
  const handle = await open(join(runDir, "journal.jsonl"), "a");
  // Group commit: entries that arrive while a flush is in flight go out together in the next
  // write + fdatasync, so many steps finishing at once cost one disk flush, not one each.
  let queued: { line: string; done: () => void; fail: (e: unknown) => void }[] = [];
  let flushing: Promise<void> | null = null;
  const flush = async (): Promise<void> => {
    while (queued.length > 0) {
      const batch = queued;
      queued = [];
      try {
        await handle.write(batch.map((b) => b.line).join(""));
        await handle.datasync();
        for (const b of batch) b.done();
      } catch (e) {
        for (const b of batch) b.fail(e);
      }
    }
    flushing = null;
  };
  return {
    append(entry) {
      return new Promise<void>((done, fail) => {
        queued.push({ line: `${JSON.stringify(entry)}\n`, done, fail });
        flushing ??= flush();
      });
    },
    async close() {
      await flushing;
      await handle.close();
    },
  };
}

/** Create the run directory and write the plan into it. */
export async function createRunDir(runDir: string, plan: GpuplanPlan): Promise<void> {
  await mkdir(join(runDir, "logs"), { recursive: true });
  await writeFile(join(runDir, "plan.json"), `${JSON.stringify(plan, null, 2)}\n`);
}

export interface JournalState {
  header: JournalHeader | undefined;
  /** `pipeline\u0000step` of every step whose last recorded attempt ended ok. */
  completed: Set<string>;
  entries: JournalEntry[];
}

export const stepKey = (pipeline: string, step: string): string => `${pipeline}\u0000${step}`;

/** Read a journal; a torn last line (crash mid-write) is ignored. */
export async function readJournal(runDir: string): Promise<JournalState> {
  const text = await readFile(join(runDir, "journal.jsonl"), "utf8");
  const entries: JournalEntry[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      entries.push(JSON.parse(line) as JournalEntry);
    } catch {
      // Only the last line can be torn; anything after it was never acknowledged.
    }
  }
  const completed = new Set<string>();
  let header: JournalHeader | undefined;
  for (const e of entries) {
    if (e.type === "run") header ??= e;
    else if (e.type === "step") {
      const key = stepKey(e.pipeline, e.step);
      if (e.status === "ok") completed.add(key);
      else completed.delete(key);
    }
  }
  return { header, completed, entries };
}
