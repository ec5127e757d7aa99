/**
 * SHA-256 as hex, without loading node:crypto for small inputs. Node compiles crypto's built-in
 * modules on first use (with node:stream under them): ~6 ms of a 60 ms `gpuplan compile`, which
 * hashes the pipeline file it read (issue #17, docs/decisions/0007-start-up.md). @noble/hashes
 * (audited, pure JavaScript) hashes a small text in microseconds; from LARGE on, OpenSSL's is
 * ~6× faster per byte and its load no longer matters, so node:crypto does it.
 */
import { sha256 } from "@noble/hashes/sha2.js";
import { bytesToHex } from "@noble/hashes/utils.js";

/** Above this many UTF-16 units, node:crypto hashes (a ~100 MB/s JavaScript hash would show). */
const LARGE = 256 * 1024;

export function sha256Hex(text: string): string {
  if (text.length > LARGE) {
    // Loaded here, not at the top: a small compile and every run never need it.
    const { createHash } = process.getBuiltinModule("node:crypto");
    return createHash("sha256").update(text, "utf8").digest("hex");
  }
  return bytesToHex(sha256(Buffer.from(text, "utf8")));
}
