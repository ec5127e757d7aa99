/**
 * The info file beside each slot: who holds it, for `gpuplan locks` and "GPU busy" messages.
 * It is only a label — the flock is the truth. An info file whose slot is not locked is stale
 * (its holder exited) and is ignored; a missing or unreadable one just means "held, holder unknown".
 *
 * It is rewritten in place with one pwrite at offset 0, padded with spaces to at least the
 * file's current size, never by write-and-rename: in a sticky world-writable directory
 * rename(2) cannot replace a file another user created, and info files are shared by all users.
 * Only the slot's holder writes (the flock serializes writers); a reader that catches a write
 * half-done gets JSON that does not parse, and reads again.
 */
import { closeSync, fstatSync, readSync, writeSync } from "node:fs";
import { hostname } from "node:os";
import { infoPath, openExisting, openShared } from "./lock-dir.js";
import type { HolderInfo } from "./types.js";

/** What the info file holds: the holder plus where it is, so a file read alone says which GPU. */
export interface SlotInfo extends HolderInfo {
  uuid: string;
  gpu: string;
  slot: number;
}

const MIN_SIZE = 256;
let host: string | undefined;

/** Write who holds `slot` (the caller holds its flock). Best effort: a label must never fail a run. */
export function writeHolderInfo(dir: string, info: SlotInfo): void {
  host ??= hostname();
  const record: SlotInfo = { ...info, host: info.host ?? host };
  let fd: number | undefined;
  try {
    fd = openShared(infoPath(dir, info.uuid, info.slot), "write");
    const json = `${JSON.stringify(record)}\n`;
    const size = Math.max(MIN_SIZE, fstatSync(fd).size, Buffer.byteLength(json));
    const buf = Buffer.alloc(size, " ");
    buf.write(json);
    writeSync(fd, buf, 0, size, 0);
  } catch {
    // The slot is still ours; `gpuplan locks` will show "holder unknown".
  } finally {
    if (fd !== undefined) closeSync(fd);
  }
}

/** Read a slot's info file; null when missing, unreadable or not one of ours. */
export function readHolderInfo(dir: string, uuid: string, slot: number): SlotInfo | null {
  for (let attempt = 0; attempt < 3; attempt++) {
    const text = readSmallFile(infoPath(dir, uuid, slot));
    if (text === null) return null;
    const info = parseInfo(text);
    if (info && info.uuid === uuid && info.slot === slot) return info;
  }
  return null;
}

/** The HolderInfo part of a slot info record (what errors and inspect() report). */
export function toHolder(info: SlotInfo): HolderInfo {
  const holder: HolderInfo = {
    pid: info.pid,
    run: info.run,
    pipeline: info.pipeline,
    step: info.step,
    since: info.since,
  };
  if (info.host !== undefined) holder.host = info.host;
  return holder;
}

function readSmallFile(path: string): string | null {
  const fd = openExisting(path);
  if (fd === null) return null;
  try {
    const buf = Buffer.alloc(64 * 1024);
    const n = readSync(fd, buf, 0, buf.length, 0);
    return buf.toString("utf8", 0, n);
  } catch {
    return null;
  } finally {
    closeSync(fd);
  }
}

function parseInfo(text: string): SlotInfo | null {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return null;
  }
  if (typeof v !== "object" || v === null) return null;
  const o = v as Record<string, unknown>;
  const ok =
    typeof o.uuid === "string" &&
    typeof o.gpu === "string" &&
    typeof o.slot === "number" &&
    typeof o.pid === "number" &&
    typeof o.run === "string" &&
    typeof o.pipeline === "string" &&
    (typeof o.step === "string" || o.step === null) &&
    typeof o.since === "string" &&
    (o.host === undefined || typeof o.host === "string");
  return ok ? (o as unknown as SlotInfo) : null;
}
