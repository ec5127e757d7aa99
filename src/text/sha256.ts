/**
 * SHA-256 of a text as hex. node:crypto is loaded at the first hash, not when a module that may
 * hash is imported: its built-in modules (node:stream under them) cost ~4–6 ms of a start, which
 * `run --dry-run` and most commands need not pay (issue #17). A pure-JavaScript hash
 * (@noble/hashes) was tried for small texts and dropped: in V8's interpreter it hashed the 1.6 KB
 * example at ~1 MB/s, and a paired compile measured the same either way (docs/decisions/0007).
 */
export function sha256Hex(text: string): string {
  const { createHash } = process.getBuiltinModule("node:crypto");
  return createHash("sha256").update(text, "utf8").digest("hex");
}
