/**
 * Memory figures from a vendor library (or sysfs) as far as they are believed. The largest GPUs
 * hold a few hundred GB; a figure above 1 PiB (2^50 bytes, well inside exact JSON numbers) is a
 * broken library — -5 read as 2^64 - 5, say — and planning on it would place work on memory that
 * is not there. Such a figure is left unknown (null), and the probe's message says so.
 * inventory.schema.json bounds the same fields by the same number (src/inventory/limits.ts), for
 * hand-written inventories.
 */

import { MAX_GPU_MEMORY_BYTES } from "../inventory/limits.js";

export interface MemoryFigures {
  total: number | null;
  free: number | null;
  used: number | null;
}

const FIELDS = ["total", "free", "used"] as const;

/**
 * `raw` (exact, as read) checked: each figure above MAX_GPU_MEMORY_BYTES, and a free or used figure
 * above the total, becomes null, with a note naming `device` for the probe's message.
 */
export function believeMemory(
  raw: { total: bigint | null; free?: bigint | null; used?: bigint | null },
  device: string,
  note: (text: string) => void,
): MemoryFigures {
  const out: MemoryFigures = { total: null, free: null, used: null };
  const dropped: string[] = [];
  for (const field of FIELDS) {
    const value = raw[field] ?? null;
    if (value === null) continue;
    if (value < 0n || value > BigInt(MAX_GPU_MEMORY_BYTES))
      dropped.push(`${field} ${value} bytes (above 1 PiB)`);
    else out[field] = Number(value);
  }
  for (const field of ["free", "used"] as const) {
    const value = out[field];
    if (value !== null && out.total !== null && value > out.total) {
      dropped.push(`${field} ${value} bytes (above the total)`);
      out[field] = null;
    }
  }
  if (dropped.length) note(`${device}: memory ${dropped.join(", ")} not believed: left unknown`);
  return out;
}

/** Bytes from a process's entry, or null when above MAX_GPU_MEMORY_BYTES (a library's "not available" marker, a broken value). */
export function believeProcessBytes(value: bigint): number | null {
  return value >= 0n && value <= BigInt(MAX_GPU_MEMORY_BYTES) ? Number(value) : null;
}
