/**
 * The lock moves on one GPU's lock file, all synchronous and non-blocking, each through the
 * open file description of the lease (or probe) that makes it: OFD locks of one description never
 * conflict with each other, locks of two descriptions always do, even in one process.
 */
import { readSync, writeSync } from "node:fs";
import type { HeldRange, OfdLocks } from "../../libc/ofd-locks.js";
import {
  MUTEX,
  QUEUE_BASE,
  QUEUE_SPACE,
  SLOT_BASE,
  SLOT_SPACE,
  slotByte,
  TICKET_COUNTER,
} from "./gpu-file-layout.js";
import { readRecord, type SlotRecord } from "./holder-info.js";

/** A slot (or, exclusive, every slot) another description holds, with its record when readable. */
export interface LiveHolder {
  slot: number;
  exclusive: boolean;
  record: SlotRecord | null;
}

export class GpuFile {
  constructor(
    readonly ofd: OfdLocks,
    readonly uuid: string,
  ) {}

  tryMutex(fd: number): boolean {
    return this.ofd.tryLock(fd, MUTEX, 1, "write");
  }

  releaseMutex(fd: number): void {
    this.ofd.unlock(fd, MUTEX, 1);
  }

  /** A place in line (call under the mutex): the next free ticket, locked on `fd`. */
  takeTicket(fd: number): number {
    const buf = Buffer.alloc(8);
    const n = readSync(fd, buf, 0, 8, TICKET_COUNTER);
    let ticket = n === 8 ? Number(buf.readBigUInt64LE(0) % BigInt(QUEUE_SPACE)) : 0;
    // A counter someone rewrote may point at tickets in use: skip to a free one.
    for (let tries = 0; !this.ofd.tryLock(fd, QUEUE_BASE + ticket, 1, "write"); tries++) {
      if (tries > 1000) throw new Error("no free ticket in the GPU lock file's queue");
      ticket = (ticket + 1) % QUEUE_SPACE;
    }
    buf.writeBigUInt64LE(BigInt((ticket + 1) % QUEUE_SPACE), 0);
    writeSync(fd, buf, 0, 8, TICKET_COUNTER);
    return ticket;
  }

  dropTicket(fd: number, ticket: number): void {
    this.ofd.unlock(fd, QUEUE_BASE + ticket, 1);
  }

  /** Whether no live waiter took its ticket before `ticket` (a wrapped counter starts over: rare, and only unfair once). */
  isHead(fd: number, ticket: number): boolean {
    return ticket === 0 || this.ofd.conflict(fd, QUEUE_BASE, ticket) === null;
  }

  /** Whether no other description holds a ticket: nobody is in line (one call). */
  lineIsEmpty(fd: number): boolean {
    return this.ofd.conflict(fd, QUEUE_BASE, QUEUE_SPACE) === null;
  }

  /** How many waiters are in line (other descriptions' tickets). */
  waiters(fd: number): number {
    return rangesIn(this.ofd, fd, QUEUE_BASE, QUEUE_SPACE).length;
  }

  trySlot(fd: number, slot: number): boolean {
    return this.ofd.tryLock(fd, slotByte(slot), 1, "write");
  }

  /** Every slot at once, in one call (the kernel merges it with the slot `fd` holds). */
  tryAllSlots(fd: number): boolean {
    return this.ofd.tryLock(fd, SLOT_BASE, SLOT_SPACE, "write");
  }

  /** Give back every slot but `keep` (on the same description: the kernel splits the range). */
  keepOnly(fd: number, keep: number): void {
    if (keep > 0) this.ofd.unlock(fd, SLOT_BASE, keep);
    this.ofd.unlock(fd, slotByte(keep + 1), SLOT_SPACE - keep - 1);
  }

  giveSlot(fd: number, slot: number): void {
    this.ofd.unlock(fd, slotByte(slot), 1);
  }

  /** The slots other descriptions hold now, by slot, with their records. */
  holders(fd: number): LiveHolder[] {
    return rangesIn(this.ofd, fd, SLOT_BASE, SLOT_SPACE)
      .sort((a, b) => a.start - b.start)
      .map((r) => {
        const slot = Math.max(0, r.start - SLOT_BASE);
        return { slot, exclusive: r.length > 1, record: readRecord(fd, this.uuid, slot) };
      });
  }
}

/**
 * Every lock of other descriptions inside [start, start+length): GETLK answers one conflicting
 * lock, not the lowest, so the range is split around each answer. 2k+1 calls for k locks.
 */
function rangesIn(ofd: OfdLocks, fd: number, start: number, length: number): HeldRange[] {
  const out: HeldRange[] = [];
  const stack: [number, number][] = [[start, start + length]];
  while (stack.length > 0) {
    const [a, b] = stack.pop()!;
    if (a >= b) continue;
    const hit = ofd.conflict(fd, a, b - a);
    if (hit === null) continue;
    const s = Math.max(hit.start, a);
    const e = Math.min(hit.start + hit.length, b);
    out.push({ ...hit, start: s, length: e - s });
    stack.push([a, s], [e, b]);
  }
  return out;
}
