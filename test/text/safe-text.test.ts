import { describe, expect, it } from "vitest";
import {
  displayCut,
  displayText,
  escapeForPage,
  escapeLines,
  escapeText,
  needsEscape,
} from "../../src/text/safe-text.js";
import { escapeOutputLine } from "../../src/ui/output-line.js";

/** Anything a terminal would act on or that hides itself: C0 (newline and tab included), DEL, C1, bidi controls, zero-width characters. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: looking for control characters is the point
const CONTROL = /[\u0000-\u001f\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/;

describe("escapeForPage", () => {
  it("shows bidi overrides, zero-width characters and escapes on the report page, keeping lines and tabs", () => {
    expect(escapeForPage("evil\u202egnp.exe")).toBe("evil\\u202egnp.exe");
    expect(escapeForPage("a\tb\nc\u2066d\u200b\u001b[31m")).toBe("a\tb\nc\\u2066d\\u200b\\x1b[31m");
    let all = "";
    for (let c = 0; c < 0x3000; c++) all += String.fromCharCode(c);
    expect(escapeForPage(all).replace(/[\n\t]/g, "")).not.toMatch(CONTROL);
  });
});

describe("escapeText", () => {
  it("shows ESC, CR, BEL, other C0 and C1 controls, DEL and bidi overrides as visible escapes", () => {
    expect(escapeText("\u001b[2J\u001b]0;pwned\u0007")).toBe("\\x1b[2J\\x1b]0;pwned\\x07");
    expect(escapeText("a\rb\nc\td")).toBe("a\\rb\\nc\\td");
    expect(escapeText("\u0000\u007f\u009b31m")).toBe("\\x00\\x7f\\x9b31m");
    expect(escapeText("abc\u202edcba\u2066x\u2069")).toBe("abc\\u202edcba\\u2066x\\u2069");
    expect(escapeText("line\u2028sep")).toBe("line\\u2028sep");
    expect(escapeText("ad\u200bmin\ufeff")).toBe("ad\\u200bmin\\ufeff");
  });

  it("leaves printable text alone, non-ASCII included", () => {
    for (const text of ["NVIDIA A100-SXM4-80GB", "Größe 16×16 — µs", "植物 ✓ 🧪", "C:\\path"])
      expect(escapeText(text)).toBe(text);
    expect(needsEscape("plain")).toBe(false);
    expect(needsEscape("x\u001by")).toBe(true);
  });

  it("never lets a control character through, whatever the input", () => {
    let all = "";
    for (let c = 0; c < 0x3000; c++) all += String.fromCharCode(c);
    expect(escapeText(all)).not.toMatch(CONTROL);
    expect(escapeLines(all).split("\n").join("")).not.toMatch(CONTROL);
  });

  it("escapeLines keeps the newlines of a multi-line text and escapes the rest", () => {
    expect(escapeLines("one\u001b[31m\ntwo\r")).toBe("one\\x1b[31m\ntwo\\r");
  });
});

describe("displayText (Slurm's answers in messages and script comments)", () => {
  it("cuts a long value with … and escapes as escapeText does, newlines included (one line, one style)", () => {
    expect(displayText("node\u001b[2J\nEvil", 80)).toBe("node\\x1b[2J\\nEvil");
    expect(displayText("ad\u200bmin", 80)).toBe("ad\\u200bmin");
    expect(displayText("x".repeat(10), 4)).toBe("xxxx…");
    expect(displayText("a\u202e".repeat(3), 3)).toBe("a\\u202ea…");
  });
});

describe("escapeOutputLine (a step's output)", () => {
  it("drops a CRLF's CR and shows a CR-redrawn progress line as its last state", () => {
    expect(escapeOutputLine("done\r", false)).toBe("done");
    expect(escapeOutputLine(" 10%\r 50%\r100%", false)).toBe("100%");
  });

  it("keeps the step's colour only when asked, reset at the end; anything else is escaped", () => {
    const line = "\u001b[31mFAILED\u001b[0m test_x \u001b[2J\u0007";
    expect(escapeOutputLine(line, false)).toBe("FAILED test_x \\x1b[2J\\x07");
    expect(escapeOutputLine(line, true)).toBe("\u001b[31mFAILED\u001b[0m test_x \\x1b[2J\\x07\u001b[0m");
  });

  it("expands tabs to the next multiple of eight columns", () => {
    expect(escapeOutputLine("a\tbc\td", false)).toBe("a       bc      d");
  });
});

describe("displayCut", () => {
  it("shows a name of up to 256 characters whole, a longer one as its first 200 and last 40 around …, escaped", () => {
    const whole = "x".repeat(256);
    expect(displayCut(whole)).toBe(whole);
    const long = `\u001b${"a".repeat(300)}-plate-17`;
    expect(displayCut(long)).toBe(`\\x1b${"a".repeat(199)}…${"a".repeat(31)}-plate-17`);
    expect(displayCut("b".repeat(4096), 4096)).toBe("b".repeat(4096));
  });

  it("never cuts a character outside the BMP in half", () => {
    const clown = "\u{1F921}"; // two UTF-16 units
    const long = `${"a".repeat(199)}${clown}${"a".repeat(100)}${clown}${"a".repeat(39)}`;
    const shown = displayCut(long);
    expect(shown).not.toMatch(/[\ud800-\udfff](?![\udc00-\udfff])/u);
    expect(shown).toBe(`${"a".repeat(199)}…${"a".repeat(39)}`);
  });
});

const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

describe("lone UTF-16 surrogates", () => {
  // A YAML or JSON file can spell half a character ("\ud800"); written to a terminal as UTF-8 it
  // would become U+FFFD, so a message would not show what the file says.
  it("are shown as their escapes; a surrogate pair is one character and is left alone", () => {
    expect(escapeText("\ud800nope")).toBe("\\ud800nope");
    expect(escapeText("x\udfffy")).toBe("x\\udfffy");
    expect(escapeText("\udc00\ud800")).toBe("\\udc00\\ud800");
    expect(escapeText("a\ud83d")).toBe("a\\ud83d");
    expect(escapeText("🧪 \ud83d\ude00")).toBe("🧪 😀");
    expect(escapeText("\ud83d\ud83d\ude00")).toBe("\\ud83d😀");
    expect(needsEscape("\ud800")).toBe(true);
    expect(needsEscape("😀")).toBe(false);
    expect(escapeForPage("<\udbff>")).toBe("<\\udbff>");
  });

  it("no escaped text holds one, whatever the input", () => {
    const units = [0x41, 0xd800, 0xdbff, 0xdc00, 0xdfff, 0x0a];
    for (const a of units)
      for (const b of units)
        for (const c of units) {
          const out = escapeText(String.fromCharCode(a, b, c));
          expect(out, JSON.stringify(out)).not.toMatch(LONE_SURROGATE);
        }
  });

  it("displayText does not cut a pair in half", () => {
    expect(displayText(`ab😀cd`, 3)).toBe("ab…");
    expect(displayText(`ab😀cd`, 4)).toBe("ab😀…");
  });
});
