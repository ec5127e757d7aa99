/**
 * What each byte range of a GPU's lock file means. Byte-range locks need no data behind them, so
 * the file stays small (sparse) however many slots a plan asks for:
 * - byte 0: the GPU's mutex, held for microseconds while one process decides an admission;
 * - bytes 8..15: the ticket counter (read and written under the mutex);
 * - SLOT_BASE + i: slot i; an exclusive holder locks the whole slot range in one call;
 * - RECORD_BASE + i × RECORD_SIZE: who holds slot i and the memory it reserved — written by the
 *   holder under the mutex, believed only while slot i is locked (a dead holder's record is stale
 *   the moment the kernel drops its lock, so kill -9 frees the slot and its memory at once);
 * - QUEUE_BASE + t: waiter ticket t, locked while that waiter is in line (arrival order).
 */

export const MUTEX = 0;
export const TICKET_COUNTER = 8;
export const SLOT_BASE = 4096;
/** Most slots a GPU may have (the pipeline schema allows 1,024). */
export const SLOT_SPACE = 1 << 20;
const RECORD_BASE = 1 << 24;
export const RECORD_SIZE = 1024;
export const QUEUE_BASE = 2 ** 40;
export const QUEUE_SPACE = 2 ** 40;

export const slotByte = (slot: number): number => SLOT_BASE + slot;
export const recordOffset = (slot: number): number => RECORD_BASE + slot * RECORD_SIZE;
