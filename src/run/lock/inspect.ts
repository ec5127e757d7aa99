/**
 * Who holds what, read without taking anything: a fresh open file description holds no lock, so
 * F_OFD_GETLK through it sees every holder (this process's leases included) and every waiter's
 * ticket. Only GPU lock files are read; anything else in the directory is ignored. A holder's
 * pid is named only once the kernel confirms it (holder-proof.ts).
 */
import { closeSync, fstatSync, readdirSync } from "node:fs";
import type { OfdLocks } from "../../libc/ofd-locks.js";
import { GpuFile } from "./gpu-file.js";
import { slotByte } from "./gpu-file-layout.js";
import { type SlotRecord, toHolder } from "./holder-info.js";
import { findHolders, holdsByte, type LockFileId } from "./holder-proof.js";
import { gpuLockPath, openGpuLockToRead, parseGpuLockFile } from "./lock-dir.js";
import type { GpuState, HolderInfo, SlotState } from "./types.js";

/** Every GPU with a lock file in the directory, in device index order (then UUID). */
export function inspectDir(ofd: OfdLocks, dir: string): GpuState[] {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return [];
  }
  const gpus = names.flatMap((name) => {
    const uuid = parseGpuLockFile(name);
    return uuid === null ? [] : (inspectGpu(ofd, dir, uuid) ?? []);
  });
  return gpus.sort(byDeviceIndex);
}

/** One GPU's state, or null when it has no lock file (or one not to trust). */
function inspectGpu(ofd: OfdLocks, dir: string, uuid: string): GpuState | null {
  const path = gpuLockPath(dir, uuid);
  const fd = openGpuLockToRead(path);
  if (fd === null) return null;
  try {
    const file = new GpuFile(ofd, uuid);
    const id: LockFileId = { path, st: fstatSync(fd) };
    const slots: SlotState[] = [];
    let reservedBytes = 0;
    let budgetBytes: number | null = null;
    let gpu: string | null = null;
    let exclusiveHeld = false;
    for (const h of file.holders(fd)) {
      const record = h.record;
      reservedBytes += record?.reservedBytes ?? 0;
      budgetBytes = record?.budgetBytes ?? budgetBytes;
      gpu = record?.gpu ?? gpu;
      exclusiveHeld ||= h.exclusive;
      const holder = record && provenHolder(record, id, slotByte(h.slot));
      const count = h.exclusive ? Math.max(1, Math.min(record?.maxPipelines ?? 1, 1024)) : 1;
      for (let i = 0; i < count; i++)
        slots.push({
          uuid,
          gpu: record?.gpu ?? null,
          slot: h.exclusive ? i : h.slot,
          held: true,
          exclusive: h.exclusive,
          reservedBytes: i === 0 ? (record?.reservedBytes ?? 0) : 0,
          holder,
        });
    }
    const freeBytes = budgetBytes === null ? null : budgetBytes - reservedBytes;
    return {
      uuid,
      gpu,
      waiters: file.waiters(fd),
      reservedBytes,
      budgetBytes,
      freeBytes,
      availableBytes: availableBytes(freeBytes, exclusiveHeld),
      slots,
    };
  } finally {
    closeSync(fd);
  }
}

/**
 * What a pipeline that does not hold the GPU could be admitted with: nothing while an exclusive
 * step has it (its lock covers every slot), however much of the budget its reservation leaves
 * unreserved; else the free budget.
 */
function availableBytes(freeBytes: number | null, exclusiveHeld: boolean): number | null {
  if (exclusiveHeld) return 0;
  return freeBytes === null ? null : Math.max(0, freeBytes);
}

/**
 * The GPU's free budget less what processes gpuplan did not start hold there (`gpuplan locks`
 * reads them after the slots). It only lowers what is available: a GPU an exclusive step has stays at 0.
 */
export function countOtherProcesses(g: GpuState, otherBytes: number): void {
  g.otherProcessesBytes = otherBytes;
  if (g.budgetBytes === null || g.freeBytes === null) return;
  g.freeBytes = g.budgetBytes - g.reservedBytes - otherBytes;
  if (g.availableBytes !== null) g.availableBytes = Math.min(g.availableBytes, Math.max(0, g.freeBytes));
}

/** The distinct holders of a GPU (an exclusive holder appears once), for busy and timeout errors. */
export function holdersOf(
  ofd: OfdLocks,
  dir: string,
  uuid: string,
  except: ReadonlySet<number> = new Set(),
): HolderInfo[] {
  const seen = new Map<string, HolderInfo>();
  for (const s of inspectGpu(ofd, dir, uuid)?.slots ?? []) {
    const h = s.holder;
    if (!h || except.has(s.slot)) continue;
    seen.set(`${h.pid}\0${h.run}\0${h.pipeline}\0${h.host ?? ""}`, h);
  }
  return [...seen.values()];
}

/**
 * The holder as the record has it, with the pid the kernel confirms: the recorded gpuplan when
 * it holds the byte, else a visible process that does (a step that outlived gpuplan, or escaped
 * its process group), named with its own pid; unverified when no visible process holds it.
 */
function provenHolder(record: SlotRecord, file: LockFileId, byte: number): HolderInfo {
  const holder = toHolder(record);
  if (holdsByte(record.pid, file, byte)) return { ...holder, verified: true };
  const found = findHolders(file, byte)[0];
  if (found === undefined) return { ...holder, verified: false };
  return { ...holder, pid: found, verified: true, startedBy: record.pid };
}

function byDeviceIndex(a: GpuState, b: GpuState): number {
  const ia = deviceIndex(a.gpu);
  const ib = deviceIndex(b.gpu);
  if (ia !== ib) return ia - ib;
  return a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0;
}

const deviceIndex = (gpu: string | null): number => {
  const m = gpu === null ? null : /:(\d+)/.exec(gpu);
  return m ? Number(m[1]) : Number.MAX_SAFE_INTEGER;
};
