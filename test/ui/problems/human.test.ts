// The human problem format: one `file:line:col  severity  message  [code]` line per problem, so
// nothing a message quotes from the input can start a line of its own.
import { describe, expect, it } from "vitest";
import { error, type Problem } from "../../../src/problems/problem.js";
import { formatHuman } from "../../../src/ui/problems/human.js";

const FORGED = "q\nfake.yaml:9:9  error  forged\r";

describe("formatHuman", () => {
  it("a newline or CR in a message or hint is escaped: the problem stays one line, no forged line appears", () => {
    const text = formatHuman(
      [
        error({
          code: "unknown-need",
          message: `needs \`${FORGED}\``,
          hint: `steps: ${FORGED}`,
          file: "p.yaml",
        }),
      ],
      [],
    );
    expect(text.split("\n")).toEqual([
      "p.yaml  error  needs `q\\nfake.yaml:9:9  error  forged\\r`  [unknown-need]",
      "  hint: steps: q\\nfake.yaml:9:9  error  forged\\r",
      "",
    ]);
  });
});

describe("long quotes of the input", () => {
  it("a 10 MB unknown key is shown cut in the message and the hint, its start and end kept", () => {
    const key = `a${"k".repeat(10_000_000)}z`;
    const text = formatHuman(
      [
        error({
          code: "schema-unknown-property",
          message: `unknown property \`${key}\` in \`pipelines.0\``,
          hint: `remove \`${key}\``,
          file: "p.yaml",
        }),
      ],
      [],
    );
    expect(text.length).toBeLessThan(1000);
    expect(text).toContain(`unknown property \`a${"k".repeat(199)}…${"k".repeat(39)}z\` in \`pipelines.0\``);
    expect(text).toContain(`hint: remove \`a${"k".repeat(199)}…`);
  });
});

describe("code frames of huge files", () => {
  const at = (offset: number, line: number, column: number): Problem => ({
    ...error({ code: "syntax-error", message: "here", file: "big", offset }),
    line,
    column,
  });

  it("the work does not grow with the file: 20 MB of NUL bytes, of tabs, of newlines", () => {
    const files = [
      { text: "\0".repeat(20_000_000), line: (offset: number): [number, number] => [1, offset + 1] },
      { text: "a\t".repeat(10_000_000), line: (offset: number): [number, number] => [1, offset + 1] },
      { text: "\n".repeat(20_000_000), line: (offset: number): [number, number] => [offset + 1, 1] },
    ];
    const started = performance.now();
    const frames: string[] = [];
    for (const { text, line } of files) {
      const problems = [0, 10_000_000, 19_999_999].map((offset) => at(offset, ...line(offset)));
      const out = formatHuman(problems, [{ file: "big", text }]);
      // Three problems of a few short lines each: nothing of the rest of the file.
      expect(out.length).toBeLessThan(1000);
      expect(Math.max(...out.split("\n").map((l) => l.length))).toBeLessThan(130);
      frames.push(out);
    }
    // The middle of the line, a window cut on both sides; its end, the last 25 bytes.
    expect(frames[0]).toMatch(/^ {2}> 1 \| …[\\x0]{100}…$/m);
    expect(frames[0]).toMatch(/^ {2}> 1 \| …(\\x00){25}$/m);
    expect(frames[2]).toMatch(/^ {2}> 10000001 \| $/m);
    // Splitting and escaping whole files took seconds each (an 80 MB file crashed); this takes milliseconds.
    expect(performance.now() - started).toBeLessThan(1500);
  });

  it("a problem without its offset is found by counting lines, and shown the same", () => {
    const text = `${"x: 1\n".repeat(1000)}bad: [\n${"y: 2\n".repeat(1000)}`;
    const offset = text.indexOf("bad");
    const withOffset = formatHuman([at(offset, 1001, 1)], [{ file: "big", text }]);
    const { offset: _, ...without } = at(offset, 1001, 1);
    expect(formatHuman([without], [{ file: "big", text }])).toBe(withOffset);
    expect(withOffset).toContain("  > 1001 | bad: [");
  });
});

describe("many problems", () => {
  const many = (n: number, severity: "error" | "warning", code: "unknown-need" | "missing-vram"): Problem[] =>
    Array.from({ length: n }, (_, i) => ({ code, severity, message: `m${i}`, file: "p.yaml" }));

  it("shows 50 in full, then one line counting the rest by code and saying how to see them all", () => {
    const problems = [...many(60, "error", "unknown-need"), ...many(3, "warning", "missing-vram")];
    const lines = formatHuman(problems, [], undefined, { seeAll: "--format json" }).split("\n");
    expect(lines.filter((l) => l.includes("  error  "))).toHaveLength(50);
    expect(lines.filter((l) => l.includes("  warning  "))).toHaveLength(0);
    expect(lines.at(-2)).toBe(
      "… 13 more not shown (10 errors, 3 warnings): 10 unknown-need, 3 missing-vram; --format json lists them all",
    );
  });

  it("errors come before warnings in what is shown; the file's order is kept", () => {
    const problems = [...many(70, "warning", "missing-vram"), ...many(2, "error", "unknown-need")];
    const lines = formatHuman(problems, []).split("\n");
    const shown = lines.filter((l) => l.startsWith("p.yaml"));
    expect(shown).toHaveLength(50);
    expect(shown.slice(-2).every((l) => l.includes("  error  "))).toBe(true);
    expect(lines.at(-2)).toBe("… 22 more not shown (22 warnings): 22 missing-vram");
  });

  it("50 or fewer are all shown, with no count line", () => {
    const text = formatHuman(many(50, "error", "unknown-need"), []);
    expect(text.split("\n").filter((l) => l.startsWith("p.yaml"))).toHaveLength(50);
    expect(text).not.toContain("not shown");
  });
});
