/**
 * Random bytes as hex, for names that must differ between two writers (a run id's suffix, a
 * temporary file's) or that another user must not guess (a warm-worker record's name in the
 * sticky warm/ folder). Read from the kernel's /dev/urandom rather than through node:crypto, whose
 * built-in modules (node:stream under them) a command would otherwise compile at start (~4–6 ms;
 * docs/decisions/0007-start-up.md); where there is no /dev/urandom (neither Linux nor a BSD),
 * Math.random, which Node seeds from OpenSSL's entropy.
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
    // Not Linux or a BSD: fall through.
  }
  for (let i = 0; i < byteCount; i++) bytes[i] = Math.floor(Math.random() * 256);
  return bytes.toString("hex");
}
