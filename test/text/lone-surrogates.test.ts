// src/text/lone-surrogates.ts finds lone surrogates with a range, not \p{Cs} (whose ICU lookup
// cost every start ~0.27 ms): the two must find the same halves, pairs left whole.
import { describe, expect, it } from "vitest";
import { firstLoneSurrogate, showLoneSurrogates } from "../../src/text/lone-surrogates.js";

describe("lone surrogates", () => {
  it("are found as \\p{Cs} finds them with the u flag, in every string of four units from a mixed set", () => {
    const units = [0x41, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0xd83d, 0xde00, 0xe000, 0xfffd];
    const byProperty = /\p{Cs}/gu;
    const escapeUnit = (c: string) => `\\u${c.charCodeAt(0).toString(16)}`;
    for (const a of units)
      for (const b of units)
        for (const c of units)
          for (const d of units) {
            const text = String.fromCharCode(a, b, c, d);
            expect(showLoneSurrogates(text), JSON.stringify(text)).toBe(text.replace(byProperty, escapeUnit));
          }
  });

  it("a pair is one character; each half alone is shown as its escape", () => {
    expect(firstLoneSurrogate("🧪 😀")).toBeNull();
    expect(firstLoneSurrogate("a\ud800b")).toBe("\\ud800");
    expect(firstLoneSurrogate("\ude00\ud83d")).toBe("\\ude00");
    expect(showLoneSurrogates("\ud83d\ud83d\ude00\ude00")).toBe("\\ud83d😀\\ude00");
  });
});
