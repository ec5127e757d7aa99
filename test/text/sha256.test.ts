// sha256Hex is SHA-256 of the text's UTF-8 as hex (src/text/sha256.ts), and a temporary name's
// suffix is random hex of the length asked for (src/text/random-hex.ts).

import { createHash } from "node:crypto";
import { expect, it } from "vitest";
import { randomHex } from "../../src/text/random-hex.js";
import { sha256Hex, sha256OfBytes } from "../../src/text/sha256.js";

it("sha256Hex gives the standard digests (FIPS 180-2 vectors; UTF-8 for non-ASCII)", () => {
  expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  expect(sha256Hex("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq")).toBe(
    "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1",
  );
  // "é" is the two bytes C3 A9 (`printf 'é' | sha256sum`).
  expect(sha256Hex("é")).toBe("4a99557e4033c3539de2eb65472017cad5f9557f7a0625a09f1c3f6e2ba69c4c");
});

it("the JavaScript hash of short texts agrees with node:crypto at every padding edge and on random bytes", () => {
  const native = (bytes: Uint8Array) => createHash("sha256").update(bytes).digest("hex");
  // Every length around the one- and two-block padding edges (55/56/64 bytes), and random
  // contents, so a wrong rotation or length word cannot hide behind the fixed vectors above.
  let seed = 12345;
  const next = () => {
    seed = (Math.imul(seed, 1103515245) + 12345) >>> 0;
    return seed >>> 24;
  };
  for (let length = 0; length <= 200; length++) {
    const bytes = Uint8Array.from({ length }, next);
    expect(sha256OfBytes(bytes), `length ${length}`).toBe(native(bytes));
  }
  for (const length of [4095, 4096, 4097, 70_000]) {
    const bytes = Uint8Array.from({ length }, next);
    expect(sha256OfBytes(bytes), `length ${length}`).toBe(native(bytes));
  }
});

it("sha256Hex is the same on both sides of the short-text limit, in bytes not characters", () => {
  const native = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");
  // 4096 bytes is the limit: 4096 ASCII characters are short; 2048 two-byte "é" are 4096
  // bytes, 2049 are over it though the text has fewer characters than the limit.
  for (const text of [
    "a".repeat(4096),
    "a".repeat(4097),
    "é".repeat(2048),
    "é".repeat(2049),
    "🙂".repeat(1500),
  ]) {
    expect(sha256Hex(text)).toBe(native(text));
  }
  // A lone surrogate is written as U+FFFD by both, as Buffer.from does.
  expect(sha256Hex("a\ud800b")).toBe(native("a\ud800b"));
});

it("randomHex gives as many random bytes as asked, as lowercase hex", () => {
  for (const n of [1, 3, 4, 16]) expect(randomHex(n)).toMatch(new RegExp(`^[0-9a-f]{${2 * n}}$`));
  const drawn = new Set(Array.from({ length: 200 }, () => randomHex(4)));
  expect(drawn.size).toBe(200);
});
