// The colour level is decided once by the CLI from the TTY, NO_COLOR, FORCE_COLOR and CI.
import { describe, expect, it } from "vitest";
import { decideColorLevel } from "../../src/cli/paint.js";

const tty = (depth: number) => ({ isTTY: true, getColorDepth: () => depth });
const pipe = { isTTY: false };

describe("decideColorLevel", () => {
  it("colours a terminal at the depth it declares", () => {
    expect(decideColorLevel(tty(4), { TERM: "xterm" })).toBe(1);
    expect(decideColorLevel(tty(8), { TERM: "xterm-256color" })).toBe(2);
    expect(decideColorLevel(tty(24), { TERM: "xterm", COLORTERM: "truecolor" })).toBe(3);
    expect(decideColorLevel(tty(1), {})).toBe(0);
  });

  it("never colours a pipe, CI or a dumb terminal unless forced", () => {
    expect(decideColorLevel(pipe, { TERM: "xterm" })).toBe(0);
    expect(decideColorLevel(tty(8), { TERM: "dumb" })).toBe(0);
    for (const ci of [{ CI: "true" }, { CI: "" }, { GITLAB_CI: "1", CI_JOB_ID: "7" }])
      expect(decideColorLevel(tty(8), { TERM: "xterm", ...ci })).toBe(0);
    expect(decideColorLevel(tty(8), { TERM: "xterm", CI: "false" })).toBe(2);
  });

  it("NO_COLOR (not empty) wins over everything; FORCE_COLOR forces its level", () => {
    expect(decideColorLevel(tty(24), { NO_COLOR: "1" })).toBe(0);
    expect(decideColorLevel(tty(24), { NO_COLOR: "1", FORCE_COLOR: "3" })).toBe(0);
    expect(decideColorLevel(tty(24), { NO_COLOR: "" })).toBe(3);
    expect(decideColorLevel(pipe, { FORCE_COLOR: "1" })).toBe(1);
    expect(decideColorLevel(pipe, { FORCE_COLOR: "" })).toBe(1);
    expect(decideColorLevel(pipe, { FORCE_COLOR: "true" })).toBe(1);
    expect(decideColorLevel(pipe, { FORCE_COLOR: "2", CI: "1" })).toBe(2);
    expect(decideColorLevel(pipe, { FORCE_COLOR: "3" })).toBe(3);
    expect(decideColorLevel(tty(24), { FORCE_COLOR: "0" })).toBe(0);
    expect(decideColorLevel(tty(24), { FORCE_COLOR: "false" })).toBe(0);
  });
});
