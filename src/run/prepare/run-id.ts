/** Run ids sort by start time and are unique without coordination: `20261122T011500Z-3fa9c1`. */
import { closeSync, openSync, readSync } from "node:fs";

export function makeRunId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${stamp}-${randomHex3()}`;
}

export const RUN_ID_PATTERN = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;

/**
 * Three random bytes as hex. Read from the kernel's /dev/urandom rather than through node:crypto,
 * whose built-in modules every `gpuplan run` (a dry run included) would otherwise compile at start
 * (~3.5 ms); where there is no /dev/urandom, Math.random, which Node seeds from OpenSSL's entropy.
 * The suffix only has to differ between runs started in the same second, not be secret.
 */
function randomHex3(): string {
  const bytes = Buffer.alloc(3);
  try {
    const fd = openSync("/dev/urandom", "r");
    try {
      if (readSync(fd, bytes, 0, 3, null) === 3) return bytes.toString("hex");
    } finally {
      closeSync(fd);
    }
  } catch {
    // Not Linux or a BSD: fall through.
  }
  return Math.floor(Math.random() * 0x1000000)
    .toString(16)
    .padStart(6, "0");
}
