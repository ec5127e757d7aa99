/**
 * The event fields the run view reads, beyond the common ts, event, run, pipeline, step, device.
 * This is the contract with the executor: emit exactly these names. Every reader is tolerant —
 * a missing or mistyped field reads as null/undefined — so a view never throws on an event.
 *
 * - run.start:           `pipelines?: string[]` (names selected), `runDir?: string`
 * - run.end:             `durationMs?: number`, `status?: "ok" | "failed" | "interrupted"`
 * - gpu.lock.wait:       `gpu: string` (device id, cuda:2), `slots: number` (how many slots it wants:
 *                        1 for a pipeline, every slot for an exclusive step; `step` is then set),
 *                        `holders?: { pid, pipeline, step, since }[]` (who holds them now)
 * - gpu.lock.acquired:   `gpu: string`, `slots: number[]` (slot numbers now held by the pipeline),
 *                        `waitedMs?: number`
 * - gpu.lock.released:   `gpu: string`, `slots: number[]` (slot numbers given back; omitted = all of
 *                        this pipeline's slots on that GPU)
 * - gpu.step.start:      `attempt: number` (1-based), `logPath?: string` (stdout; a worker task's
 *                        whole log), `stderrPath?: string` (a plain step's stderr), `cpus?: string`
 *                        (CPU list like "0-15,32-47" when pinned to its GPU's CPUs); `device` is
 *                        where it runs (cpu after a fallback)
 * - gpu.step.end:        `status: "ok" | "error" | "oom" | "timeout" | "interrupted"`,
 *                        `exitCode: number | null`, `signal: string | null` (SIGKILL), `durationMs: number`,
 *                        `attempt: number`, `logPath: string`, `stderrPath?: string` (both
 *                        gone when an ok step printed nothing)
 * - gpu.step.skip:       `reason: string` (e.g. "completed in an earlier run", "needs plate-3/segment, which failed")
 * - gpu.step.retry:      `attempt: number` (the attempt about to start), `of?: number` (attempts allowed),
 *                        `reason: string` ("oom"), `nextDevice?: string` (cpu for an on_oom fallback).
 *                        Order for a retried step: step.end (failed attempt), step.retry, step.start.
 * - gpu.step.oom / gpu.step.timeout: informational; the view relies on gpu.step.end's status.
 * - gpu.memory.snapshot: `at: "step.start" | "step.end" | "oom"`, `gpus: { gpu: string, usedBytes: number,
 *                        freeBytes: number, totalBytes: number }[]` (usedBytes or freeBytes may be null
 *                        when one is unknown), `cpu?: { totalBytes, availableBytes }` (/proc/meminfo).
 *                        A flat form — `usedBytes`, `freeBytes`, `totalBytes` at the top level for
 *                        the event's `device` — is read too.
 */
import type { RunEvent, StepStatus } from "../../run/record/events.js";

const STEP_STATUSES: readonly string[] = ["ok", "error", "oom", "timeout", "load-timeout", "interrupted"];

export function readString(event: RunEvent, field: string): string | null {
  const v = event[field];
  return typeof v === "string" ? v : null;
}

export function readNumber(event: RunEvent, field: string): number | null {
  const v = event[field];
  return typeof v === "number" && Number.isFinite(v) ? v : null;
}

/** gpu.step.end's status; anything unknown reads as "error" so it is never counted as a success. */
export function readStatus(event: RunEvent): StepStatus {
  const v = event.status;
  return typeof v === "string" && STEP_STATUSES.includes(v) ? (v as StepStatus) : "error";
}

/** Slot numbers of gpu.lock.acquired/released; null when the event gives none (or only a count). */
export function readSlotNumbers(event: RunEvent): number[] | null {
  const v = event.slots;
  if (!Array.isArray(v)) return null;
  return v.filter((n): n is number => typeof n === "number" && Number.isInteger(n) && n >= 0);
}

/** How many slots an event is about: the count for gpu.lock.wait, the list's length otherwise. */
export function readSlotCount(event: RunEvent): number | null {
  const v = event.slots;
  if (typeof v === "number" && Number.isInteger(v) && v > 0) return v;
  if (Array.isArray(v)) return v.length;
  return null;
}

export interface MemoryReading {
  gpu: string;
  usedBytes: number;
  freeBytes: number | null;
  totalBytes: number;
}

/** The per-GPU readings of a gpu.memory.snapshot (array form, or the flat form for `device`). */
export function readMemory(event: RunEvent): MemoryReading[] {
  const readings: MemoryReading[] = [];
  const list = event.gpus;
  if (Array.isArray(list)) {
    for (const item of list) {
      if (typeof item !== "object" || item === null) continue;
      const r = item as Record<string, unknown>;
      const reading = toReading(r.gpu, r.usedBytes, r.freeBytes, r.totalBytes);
      if (reading) readings.push(reading);
    }
  }
  const cpu = event.cpu;
  if (typeof cpu === "object" && cpu !== null) {
    const r = cpu as Record<string, unknown>;
    const reading = toReading("cpu", null, r.availableBytes, r.totalBytes);
    if (reading) readings.push(reading);
  }
  if (readings.length > 0 || Array.isArray(list)) return readings;
  const flat = toReading(event.device, event.usedBytes, event.freeBytes, event.totalBytes);
  return flat ? [flat] : [];
}

function toReading(gpu: unknown, used: unknown, free: unknown, total: unknown): MemoryReading | null {
  if (typeof gpu !== "string" || typeof total !== "number" || total <= 0) return null;
  const freeBytes = typeof free === "number" ? free : null;
  const usedBytes = typeof used === "number" ? used : freeBytes !== null ? total - freeBytes : null;
  if (usedBytes === null) return null;
  return { gpu, usedBytes, freeBytes, totalBytes: total };
}
