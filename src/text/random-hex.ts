/**
 * Random bytes as hex, for names that must differ between two writers (a run id's suffix, a
 * temporary file's) or that another user must not guess (a warm-worker record's name in the
 * sticky warm/ folder). Read from the kernel's /dev/urandom rather than through node:crypto, whose
 * built-in modules (node:stream under them) a command would otherwise compile at start (~4–6 ms;
 * docs/decisions/0007-start-up.md); where /dev/urandom cannot be read (not Linux or a BSD, a
 * chroot or container without it, out of descriptors), the Web Crypto global, which loads those
 * modules only then. Never Math.random: V8's xorshift128+ can be recovered from a few outputs, and
 * run ids (whose suffix comes from here) are in folder names anyone on the machine can list.
 */
import { closeSync, openSync, readSync } from "node:fs";

export function randomHex(byteCount: number): string {
  const bytes = Buffer.alloc(byteCount);
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      if (readSync(fd, bytes, 0, byteCount, null) === byteCount) return bytes.toString("hex");
    } finally {
      closeSync(fd);
    }
  } catch {
    // No /dev/urandom to read: fall through.
  }
  globalThis.crypto.getRandomValues(bytes);
  return bytes.toString("hex");
}
