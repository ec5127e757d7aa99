/**
 * SHA-256 of a text's UTF-8 as hex.
 *
 * Short texts (a pipeline file of a few KB, an inventory's facts, a log name) are hashed here in
 * plain JavaScript; longer ones by node:crypto, loaded at the first such hash. Loading node:crypto
 * compiles ~36 built-in modules (node:stream under them): 3.3–5.6 ms of a ~70 ms compile, while
 * this function hashes the 1.6 KB example in ~0.7 ms on its first, interpreted call (issue #17,
 * docs/decisions/0007-start-up.md). In V8's interpreter it runs at ~2.5 MB/s, so above
 * SMALL_TEXT_BYTES node:crypto's native speed pays for its load. @noble/hashes was tried and
 * dropped earlier: its generic classes made the same 1.6 KB take ~3 ms.
 */

/** Up to this many UTF-8 bytes the JavaScript hash beats loading node:crypto (measured ~8 KB). */
const SMALL_TEXT_BYTES = 4096;

export function sha256Hex(text: string): string {
  // A UTF-16 unit is at least one UTF-8 byte, so a longer text cannot be small: it is not encoded
  // here. One that could be is encoded once, for whichever hash takes it.
  const bytes = text.length <= SMALL_TEXT_BYTES ? Buffer.from(text, "utf8") : null;
  return sha256Of(bytes ?? text);
}

/** SHA-256 as hex of bytes (a file as read: a run's plan.json), or of a string's UTF-8. */
export function sha256Of(data: Uint8Array | string): string {
  if (typeof data !== "string" && data.length <= SMALL_TEXT_BYTES) return sha256OfBytes(data);
  const { createHash } = process.getBuiltinModule("node:crypto");
  return createHash("sha256").update(data).digest("hex");
}

// FIPS 180-4 §4.2.2: the first 32 bits of the fractional parts of the cube roots of the first
// 64 primes.
// biome-ignore format: one row per eight constants reads like the standard's table
const K = new Int32Array([
  0x428a2f98, 0x71374491, 0xb5c0fbcf, 0xe9b5dba5, 0x3956c25b, 0x59f111f1, 0x923f82a4, 0xab1c5ed5,
  0xd807aa98, 0x12835b01, 0x243185be, 0x550c7dc3, 0x72be5d74, 0x80deb1fe, 0x9bdc06a7, 0xc19bf174,
  0xe49b69c1, 0xefbe4786, 0x0fc19dc6, 0x240ca1cc, 0x2de92c6f, 0x4a7484aa, 0x5cb0a9dc, 0x76f988da,
  0x983e5152, 0xa831c66d, 0xb00327c8, 0xbf597fc7, 0xc6e00bf3, 0xd5a79147, 0x06ca6351, 0x14292967,
  0x27b70a85, 0x2e1b2138, 0x4d2c6dfc, 0x53380d13, 0x650a7354, 0x766a0abb, 0x81c2c92e, 0x92722c85,
  0xa2bfe8a1, 0xa81a664b, 0xc24b8b70, 0xc76c51a3, 0xd192e819, 0xd6990624, 0xf40e3585, 0x106aa070,
  0x19a4c116, 0x1e376c08, 0x2748774c, 0x34b0bcb5, 0x391c0cb3, 0x4ed8aa4a, 0x5b9cca4f, 0x682e6ff3,
  0x748f82ee, 0x78a5636f, 0x84c87814, 0x8cc70208, 0x90befffa, 0xa4506ceb, 0xbef9a3f7, 0xc67178f2,
]);

/** FIPS 180-4 §6.2 on bytes already in memory; 32-bit words live as signed ints (`| 0`). The
 * indexes below are all inside their 64-entry arrays, hence the `!`. */
export function sha256OfBytes(bytes: Uint8Array): string {
  const n = bytes.length;
  // §5.1.1 padding: a 1 bit, zeros, and the length in bits as 64 big-endian bits, to a multiple
  // of 64 bytes.
  const total = ((n + 9 + 63) >>> 6) << 6;
  const message = new Uint8Array(total);
  message.set(bytes);
  message[n] = 0x80;
  const view = new DataView(message.buffer);
  view.setUint32(total - 8, Math.floor(n / 0x20000000));
  view.setUint32(total - 4, (n << 3) >>> 0);

  const w = new Int32Array(64);
  let h0 = 0x6a09e667 | 0;
  let h1 = 0xbb67ae85 | 0;
  let h2 = 0x3c6ef372 | 0;
  let h3 = 0xa54ff53a | 0;
  let h4 = 0x510e527f | 0;
  let h5 = 0x9b05688c | 0;
  let h6 = 0x1f83d9ab | 0;
  let h7 = 0x5be0cd19 | 0;
  for (let block = 0; block < total; block += 64) {
    for (let i = 0; i < 16; i++) w[i] = view.getInt32(block + i * 4);
    for (let i = 16; i < 64; i++) {
      const x = w[i - 15]!;
      const y = w[i - 2]!;
      const s0 = ((x >>> 7) | (x << 25)) ^ ((x >>> 18) | (x << 14)) ^ (x >>> 3);
      const s1 = ((y >>> 17) | (y << 15)) ^ ((y >>> 19) | (y << 13)) ^ (y >>> 10);
      w[i] = (w[i - 16]! + s0 + w[i - 7]! + s1) | 0;
    }
    let a = h0;
    let b = h1;
    let c = h2;
    let d = h3;
    let e = h4;
    let f = h5;
    let g = h6;
    let h = h7;
    for (let i = 0; i < 64; i++) {
      const sum1 = ((e >>> 6) | (e << 26)) ^ ((e >>> 11) | (e << 21)) ^ ((e >>> 25) | (e << 7));
      const t1 = (h + sum1 + ((e & f) ^ (~e & g)) + K[i]! + w[i]!) | 0;
      const sum0 = ((a >>> 2) | (a << 30)) ^ ((a >>> 13) | (a << 19)) ^ ((a >>> 22) | (a << 10));
      const t2 = (sum0 + ((a & b) ^ (a & c) ^ (b & c))) | 0;
      h = g;
      g = f;
      f = e;
      e = (d + t1) | 0;
      d = c;
      c = b;
      b = a;
      a = (t1 + t2) | 0;
    }
    h0 = (h0 + a) | 0;
    h1 = (h1 + b) | 0;
    h2 = (h2 + c) | 0;
    h3 = (h3 + d) | 0;
    h4 = (h4 + e) | 0;
    h5 = (h5 + f) | 0;
    h6 = (h6 + g) | 0;
    h7 = (h7 + h) | 0;
  }
  let hex = "";
  for (const word of [h0, h1, h2, h3, h4, h5, h6, h7]) hex += (word >>> 0).toString(16).padStart(8, "0");
  return hex;
}
