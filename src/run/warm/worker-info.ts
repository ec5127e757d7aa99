/**
 * Warm workers as `gpuplan locks` sees them: each gpuplan process with warm workers keeps one
 * small JSON file, `warm.<pid>.json`, in the lock directory beside the slot files. Like the slot
 * info files it is only a label (the slot flocks are the truth): a file whose gpuplan or worker
 * processes are gone (kill -9 leaves it behind) is ignored, never trusted.
 */
import { readdirSync, readFileSync, unlinkSync, writeFileSync } from "node:fs";
import { hostname } from "node:os";
import { join } from "node:path";
import type { LockWarmWorker } from "../../schema-types/locks.js";
import type { WarmWorkerInfo } from "./worker-pool.js";

/** One warm worker in `gpuplan locks --json` (`workers[]`), as schemas/locks.schema.json defines it. */
export type WarmWorkerState = LockWarmWorker;

interface WarmInfoFile {
  pid: number;
  host: string;
  run: string;
  workers: { key: string; gpu: string; pid: number | null; busy: boolean; idleSince: string | null }[];
}

const FILE = /^warm\.(\d+)\.json$/;
const warmInfoPath = (dir: string, pid: number) => join(dir, `warm.${pid}.json`);

/** Rewrite this process's file (or remove it when no worker is left). Best effort: a label never fails a run. */
export function writeWarmInfo(dir: string, run: string, workers: readonly WarmWorkerInfo[]): void {
  const path = warmInfoPath(dir, process.pid);
  try {
    if (workers.length === 0) {
      unlinkSync(path);
      return;
    }
    const file: WarmInfoFile = {
      pid: process.pid,
      host: hostname(),
      run,
      workers: workers.map((w) => ({
        key: w.key,
        gpu: w.device,
        pid: w.pid,
        busy: w.busy,
        idleSince: w.idleSince === null ? null : new Date(w.idleSince).toISOString(),
      })),
    };
    writeFileSync(path, `${JSON.stringify(file)}\n`, { mode: 0o644 });
  } catch {
    // Unwritable directory, or nothing to remove: `gpuplan locks` just shows fewer workers.
  }
}

/** Every live warm worker recorded in the lock directory, by GPU then key. */
export function readWarmWorkers(dir: string, isAlive: (pid: number) => boolean): WarmWorkerState[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const out: WarmWorkerState[] = [];
  for (const name of names) {
    if (!FILE.test(name)) continue;
    let file: WarmInfoFile;
    try {
      file = JSON.parse(readFileSync(join(dir, name), "utf8")) as WarmInfoFile;
    } catch {
      continue; // Half-written or not ours.
    }
    if (file.host !== hostname() || !isAlive(file.pid)) continue;
    for (const w of file.workers ?? []) {
      if (w.pid !== null && !isAlive(w.pid)) continue;
      out.push({ ...w, gpuplanPid: file.pid, run: file.run });
    }
  }
  return out.sort((a, b) => a.gpu.localeCompare(b.gpu) || a.key.localeCompare(b.key));
}
