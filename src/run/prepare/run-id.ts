/** Run ids sort by start time and are unique without coordination: `20261122T011500Z-3fa9c1`. */
import { randomHex } from "../../text/random-hex.js";

export function makeRunId(now: Date = new Date()): string {
  const stamp = now
    .toISOString()
    .replace(/[-:]/g, "")
    .replace(/\.\d+Z$/, "Z");
  return `${stamp}-${randomHex(3)}`;
}

export const RUN_ID_PATTERN = /^\d{8}T\d{6}Z-[0-9a-f]{6}$/;
