/**
 * Telling an event read a second time from a new one. An events line carries who and when: its
 * kind, pipeline, step, attempt, GPU and time (to the millisecond). Two lines that agree on all of
 * them are one event written (or copied: a follower that merged a task's file again, a file
 * appended to itself) twice, and a reader that took both counted one attempt as two — one of them
 * never ending, drawn as interrupted — and a slot wait twice. Only the events something is counted
 * from are told apart: memory readings and model loads repeated change nothing a report counts,
 * and remembering them would cost memory for nothing.
 */
import type { RunEvent } from "../run/record/events.js";

const COUNTED = new Set<string>([
  "run.start",
  "run.end",
  "gpu.step.start",
  "gpu.step.end",
  "gpu.step.retry",
  "gpu.step.skip",
  "gpu.step.oom",
  "gpu.lock.wait",
  "gpu.lock.acquired",
  "gpu.lock.released",
]);

/** Remembers the counted events read so far; `isRepeat` says whether `e` is one of them again. */
export class RepeatedEvents {
  private readonly seen = new Set<string>();
  /** Repeats found, and the first one's line (1-based; 0 when the caller gives none). */
  count = 0;
  firstLine = 0;

  isRepeat(e: RunEvent, line = 0): boolean {
    if (!COUNTED.has(e.event)) return false;
    const attempt = "attempt" in e && typeof e.attempt === "number" ? e.attempt : "";
    const gpu = "gpu" in e && typeof e.gpu === "string" ? e.gpu : "";
    const key = `${e.event}\u0000${e.ts}\u0000${e.pipeline}\u0000${e.step}\u0000${attempt}\u0000${gpu}`;
    if (!this.seen.has(key)) {
      this.seen.add(key);
      return false;
    }
    if (this.count++ === 0) this.firstLine = line;
    return true;
  }
}
