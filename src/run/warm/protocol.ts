/**
 * The warm worker protocol, one JSON object per line. The worker writes `{"ready": true}` once
 * loaded; gpuplan then writes one task per line on its stdin and reads one reply per task:
 *
 *   → {"id": "t1", "pipeline": "plate-07", "step": "segment", "args": {"matrix": {"plate": "07"}, "argv": ["--diameter", "30"]}}
 *   ← {"id": "t1", "ok": true, "result": {...}}
 *   ← {"id": "t1", "ok": false, "error": "CUDA out of memory", "kind": "oom"}
 *
 * Any other stdout line (one that is not a JSON object with `ready` or `id`) is ordinary output
 * and goes to the step's log, so a worker may print freely.
 *
 * A stdout line may be at most MAX_WORKER_LINE_CHARS long: gpuplan holds a line in memory until its
 * newline, so a worker that sends more without one (a reply of 1.5 GB, a binary dump) breaks the
 * protocol — its task fails with that said, the rest of the line is dropped unread, and gpuplan's
 * memory stays bounded. A longer stderr line is passed on in pieces of that size.
 */

/** The longest stdout line (a reply included) gpuplan reads from a worker: 16 Mi characters. */
export const MAX_WORKER_LINE_CHARS = 16 * 1024 * 1024;

/**
 * The most of a worker's own text (an error reply, an id it sent) that a failure carries: a reply
 * line may hold 16 Mi characters, and a 100,000-character error was printed twice to the terminal
 * and written twice into each gpu.step.end. The step's log keeps the whole error.
 */
const MAX_WORKER_TEXT_CHARS = 2000;

/** `text` cut to MAX_WORKER_TEXT_CHARS, saying how much was left out. */
export function clipWorkerText(text: string): string {
  if (text.length <= MAX_WORKER_TEXT_CHARS) return text;
  return `${text.slice(0, MAX_WORKER_TEXT_CHARS)}… (${text.length - MAX_WORKER_TEXT_CHARS} more characters)`;
}

/** What a task carries: the pipeline's matrix values and the step's own `run` words. */
interface TaskArgs {
  matrix: Record<string, string>;
  argv: string[];
}

export interface TaskMessage {
  id: string;
  pipeline: string;
  step: string;
  args: TaskArgs;
}

export type WorkerMessage =
  | { type: "ready" }
  | { type: "reply"; id: string; ok: true; result: unknown }
  | { type: "reply"; id: string; ok: false; error: string; kind: "oom" | null }
  /** A protocol line gpuplan cannot accept (the worker is then treated as broken). */
  | { type: "invalid"; reason: string };

/** The line to write to a worker's stdin for one task. */
export const encodeTask = (task: TaskMessage): string => `${JSON.stringify(task)}\n`;

/** A protocol message, or null for an ordinary output line. */
export function parseWorkerLine(line: string): WorkerMessage | null {
  const text = line.trim();
  if (!text.startsWith("{")) return null;
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof value !== "object" || value === null || Array.isArray(value)) return null;
  const v = value as Record<string, unknown>;
  if (!("ready" in v) && !("id" in v)) return null;
  if ("ready" in v && !("id" in v)) {
    return v.ready === true
      ? { type: "ready" }
      : { type: "invalid", reason: `ready is ${clipWorkerText(JSON.stringify(v.ready) ?? "undefined")}` };
  }
  if (typeof v.id !== "string") return { type: "invalid", reason: "a reply's id is not a string" };
  if (v.ok === true) return { type: "reply", id: v.id, ok: true, result: v.result ?? null };
  if (v.ok === false) {
    const error = typeof v.error === "string" ? v.error : "the worker reported an error";
    return { type: "reply", id: v.id, ok: false, error, kind: v.kind === "oom" ? "oom" : null };
  }
  return { type: "invalid", reason: "a reply without ok: true or ok: false" };
}
