/**
 * The record beside each slot in the GPU's lock file: who holds it and the memory it reserved,
 * for admission by memory, `gpuplan locks` and "GPU busy" messages. The lock is the truth: a
 * record counts only while its slot byte is locked. Anyone who can write the lock file can write
 * a record, so a record is never trusted for display (every string is escaped where shown) and
 * its pid is checked against the kernel (holder-proof.ts) before a holder is named.
 *
 * One pwrite of RECORD_SIZE bytes (JSON padded with spaces; long labels are cut to fit), written
 * under the GPU's mutex; a reader outside the mutex that catches a half-written one retries.
 */
import { readSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { RECORD_SIZE, recordOffset } from "./gpu-file-layout.js";
import type { HolderInfo } from "./types.js";

/** What a record holds: the holder plus where it is and what it reserved. */
export interface SlotRecord extends HolderInfo {
  uuid: string;
  gpu: string;
  slot: number;
  /** Bytes of the GPU's memory budget this holder reserved (admission sums these). */
  reservedBytes: number;
  /** The GPU's budget as the holder's plan has it; null when it did not say. */
  budgetBytes: number | null;
  /** Every slot of the GPU (an exclusive step). */
  exclusive: boolean;
  /** The GPU's slots as the holder's plan has it. */
  maxPipelines: number;
}

let host: string | undefined;

/** Write the record of `record.slot` (the caller holds the slot). Best effort: a label must never fail a run. */
export function writeRecord(fd: number, record: SlotRecord): void {
  host ??= hostname();
  const full: SlotRecord = { ...record, host: record.host ?? host };
  try {
    writeSync(fd, encode(full), 0, RECORD_SIZE, recordOffset(record.slot));
  } catch {
    // The slot is still ours; `gpuplan locks` will show "holder unknown".
  }
}

/** Read a slot's record; null when missing, unparsable or not about this slot. */
export function readRecord(fd: number, uuid: string, slot: number): SlotRecord | null {
  const buf = Buffer.alloc(RECORD_SIZE);
  for (let attempt = 0; attempt < 3; attempt++) {
    let n: number;
    try {
      n = readSync(fd, buf, 0, RECORD_SIZE, recordOffset(slot));
    } catch {
      return null;
    }
    const record = parse(buf.toString("utf8", 0, n));
    if (record && record.uuid === uuid && record.slot === slot) return record;
  }
  return null;
}

/** The HolderInfo part of a record (what errors and inspect() report). */
export function toHolder(record: SlotRecord): HolderInfo {
  const holder: HolderInfo = {
    pid: record.pid,
    run: record.run,
    pipeline: record.pipeline,
    step: record.step,
    since: record.since,
  };
  if (record.host !== undefined) holder.host = record.host;
  return holder;
}

/** JSON in RECORD_SIZE bytes: labels are cut (by code point) until it fits. */
function encode(record: SlotRecord): Buffer {
  let r = record;
  for (let keep = 400; ; keep = Math.floor(keep / 2)) {
    const json = `${JSON.stringify(r)}\n`;
    if (Buffer.byteLength(json) < RECORD_SIZE || keep < 8) {
      const buf = Buffer.alloc(RECORD_SIZE, " ");
      buf.write(json.slice(0, RECORD_SIZE));
      return buf;
    }
    const cut = (s: string) => [...s].slice(0, keep).join("");
    r = {
      ...record,
      run: cut(record.run),
      pipeline: cut(record.pipeline),
      step: record.step === null ? null : cut(record.step),
      gpu: cut(record.gpu),
      ...(record.host !== undefined && { host: cut(record.host) }),
    };
  }
}

function parse(text: string): SlotRecord | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  const count = (x: unknown) => typeof x === "number" && Number.isSafeInteger(x) && x >= 0;
  const ok =
    typeof o.uuid === "string" &&
    typeof o.gpu === "string" &&
    count(o.slot) &&
    typeof o.pid === "number" &&
    Number.isSafeInteger(o.pid) &&
    typeof o.run === "string" &&
    typeof o.pipeline === "string" &&
    (typeof o.step === "string" || o.step === null) &&
    typeof o.since === "string" &&
    (o.host === undefined || typeof o.host === "string") &&
    count(o.reservedBytes) &&
    (o.budgetBytes === null || count(o.budgetBytes)) &&
    typeof o.exclusive === "boolean" &&
    count(o.maxPipelines);
  return ok ? (o as unknown as SlotRecord) : null;
}
