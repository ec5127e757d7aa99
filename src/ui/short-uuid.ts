/**
 * Short GPU UUIDs for people: `GPU-5c1e8f2a` (the prefix and the first 8 hex digits, as nvidia-smi
 * users know them), lengthened — as git lengthens short hashes — until no other UUID on the
 * machine starts the same way, so two GPUs never look alike. --json always has the full UUID.
 */
import { escapeText } from "../text/safe-text.js";

/** `GPU-` and 8 hex digits. */
const SHORT = 12;

/**
 * The short form of each of `uuids` (every GPU the table, message or view can name): the
 * shortest prefix of at least 12 characters that no other UUID of the set shares, never ending on
 * a `-`, escaped for the terminal. A UUID outside the set is shortened against the set.
 */
export function shortUuids(uuids: Iterable<string>): (uuid: string) => string {
  const known = [...new Set(uuids)];
  const cache = new Map<string, string>();
  return (uuid) => {
    let short = cache.get(uuid);
    if (short === undefined) {
      // Detection's stand-in for a UUID it could not learn names the PCI bus id: cut, it said nothing.
      const length = uuid.startsWith("unknown-") ? uuid.length : uniqueLength(uuid, known);
      short = escapeText(uuid.slice(0, length));
      cache.set(uuid, short);
    }
    return short;
  };
}

function uniqueLength(uuid: string, known: readonly string[]): number {
  let length = SHORT;
  for (const other of known) {
    if (other !== uuid) length = Math.max(length, commonPrefix(uuid, other) + 1);
  }
  while (length < uuid.length && uuid[length - 1] === "-") length++;
  return Math.min(length, uuid.length);
}

function commonPrefix(a: string, b: string): number {
  const n = Math.min(a.length, b.length);
  let i = 0;
  while (i < n && a[i] === b[i]) i++;
  return i;
}
