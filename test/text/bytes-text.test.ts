import { describe, expect, it } from "vitest";
import { textFromBytes } from "../../src/text/bytes-text.js";

const bytes = (...b: number[]) => Uint8Array.from(b);

describe("textFromBytes", () => {
  it("decodes UTF-8 as it is", () => {
    expect(textFromBytes(Buffer.from("NVIDIA H100 — 80 GB ✓ 𝄞"))).toBe("NVIDIA H100 — 80 GB ✓ 𝄞");
    expect(textFromBytes(bytes())).toBe("");
  });

  it("spells out each byte that is not part of a UTF-8 character, never U+FFFD", () => {
    // "GPU" FF FE "X": Latin-1 ÿþ, no UTF-8 lead bytes at all.
    expect(textFromBytes(bytes(0x47, 0x50, 0x55, 0xff, 0xfe, 0x58))).toBe("GPU\\xff\\xfeX");
    // A truncated 3-byte character, then a valid one: the valid one survives.
    expect(textFromBytes(bytes(0xe2, 0x80, 0x41, 0xc3, 0xa9))).toBe("\\xe2\\x80Aé");
    // An overlong "/" (C0 AF) and a UTF-16 surrogate encoded in UTF-8 (ED A0 80) are not UTF-8.
    expect(textFromBytes(bytes(0xc0, 0xaf))).toBe("\\xc0\\xaf");
    expect(textFromBytes(bytes(0xed, 0xa0, 0x80))).toBe("\\xed\\xa0\\x80");
  });

  it("spells out a U+FFFD the bytes hold, which the file loader would refuse", () => {
    expect(textFromBytes(Buffer.from("a\ufffdb"))).toBe("a\\xef\\xbf\\xbdb");
  });

  it("never answers U+FFFD, whatever the bytes", () => {
    for (let seed = 1; seed < 500; seed++) {
      let x = seed;
      const random = Uint8Array.from({ length: 24 }, () => {
        x = (x * 1103515245 + 12345) % 2 ** 31;
        return x & 0xff;
      });
      expect(textFromBytes(random)).not.toContain("\ufffd");
    }
  });
});
