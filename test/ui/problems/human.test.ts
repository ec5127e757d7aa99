// The human problem format: one `file:line:col  severity  message  [code]` line per problem, so
// nothing a message quotes from the input can start a line of its own.
import { describe, expect, it } from "vitest";
import { error } from "../../../src/problems/problem.js";
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
