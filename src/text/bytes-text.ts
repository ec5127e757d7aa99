/**
 * Bytes from outside gpuplan that are meant to be text but need not be UTF-8 (a vendor library's
 * C strings, /proc command lines) decoded so that what gpuplan writes from them reads back: a byte
 * that is not part of a UTF-8 character is spelled out in ASCII as `\xff`, where a plain decode
 * would give U+FFFD — which the file loader takes for the mark of a failed conversion and refuses
 * (src/source/source-file.ts). A U+FFFD the bytes really hold is spelled out the same way, for the
 * same reason. A leaf module: the probe child bundles it.
 */
import { isUtf8 } from "node:buffer";

/** The bytes of U+FFFD in UTF-8. */
const REPLACEMENT = [0xef, 0xbf, 0xbd];

/** `bytes` as text: UTF-8 where it is, each other byte (and each byte of a U+FFFD) as `\xHH`. */
export function textFromBytes(bytes: Uint8Array): string {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (isUtf8(buf) && buf.indexOf(Buffer.from(REPLACEMENT)) === -1) return buf.toString("utf8");
  let out = "";
  let start = 0;
  for (let i = 0; i < buf.length; ) {
    const length = characterLength(buf, i);
    if (length) {
      i += length;
      continue;
    }
    out += `${buf.toString("utf8", start, i)}\\x${buf[i]!.toString(16).padStart(2, "0")}`;
    i++;
    start = i;
  }
  return out + buf.toString("utf8", start);
}

/**
 * The length of the UTF-8 character at `at` (1 to 4), or 0 where none starts or it is U+FFFD.
 * A valid character has exactly one length: no shorter prefix of it is valid on its own.
 */
function characterLength(buf: Buffer, at: number): number {
  for (let n = 1; n <= 4 && at + n <= buf.length; n++) {
    if (!isUtf8(buf.subarray(at, at + n))) continue;
    const replacement = n === 3 && REPLACEMENT.every((b, k) => buf[at + k] === b);
    return replacement ? 0 : n;
  }
  return 0;
}
