// sha256Hex is SHA-256 as node:crypto computes it, whichever implementation hashed: @noble/hashes
// below 256 Ki UTF-16 units, OpenSSL's from there on (src/text/sha256.ts).
import { createHash } from "node:crypto";
import fc from "fast-check";
import { expect, it } from "vitest";
import { randomHex } from "../../src/text/random-hex.js";
import { sha256Hex } from "../../src/text/sha256.js";

const reference = (text: string) => createHash("sha256").update(text, "utf8").digest("hex");

it("matches node:crypto on known and random texts, astral and lone surrogates included", () => {
  expect(sha256Hex("")).toBe("e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
  expect(sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  for (const text of ["é", "🧬 cell painting", "\ud800", "a\udfffb", "\u0000\n\r"])
    expect(sha256Hex(text)).toBe(reference(text));
  fc.assert(
    fc.property(
      fc.string({ unit: "grapheme", maxLength: 300 }),
      (text) => sha256Hex(text) === reference(text),
    ),
  );
  fc.assert(
    fc.property(fc.string({ unit: "binary", maxLength: 300 }), (text) => sha256Hex(text) === reference(text)),
  );
});

it("gives the same hash on both sides of the switch to node:crypto", () => {
  const unit = "é🧬x";
  for (const length of [256 * 1024 - 1, 256 * 1024, 256 * 1024 + 1, 1_000_003]) {
    const text = unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
    expect(sha256Hex(text), `length ${length}`).toBe(reference(text));
  }
});

it("randomHex gives as many random bytes as asked, as lowercase hex", () => {
  for (const n of [1, 3, 4, 16]) expect(randomHex(n)).toMatch(new RegExp(`^[0-9a-f]{${2 * n}}$`));
  const drawn = new Set(Array.from({ length: 200 }, () => randomHex(4)));
  expect(drawn.size).toBe(200);
});
