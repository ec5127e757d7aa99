import { describe, expect, it } from "vitest";
import { durationSuggestion, formatDuration, parseDuration } from "../../src/units/duration.js";

describe("parseDuration", () => {
  it("reads units into milliseconds", () => {
    expect(parseDuration("250ms")).toBe(250);
    expect(parseDuration("30s")).toBe(30_000);
    expect(parseDuration("15m")).toBe(900_000);
    expect(parseDuration("2h")).toBe(7_200_000);
    expect(parseDuration("1d")).toBe(86_400_000);
  });

  it("takes milliseconds as numbers or digit strings, and decimals", () => {
    expect(parseDuration(100)).toBe(100);
    expect(parseDuration("100")).toBe(100);
    expect(parseDuration(0)).toBe(0);
    expect(parseDuration("1.5h")).toBe(5_400_000);
    expect(parseDuration("0.5s")).toBe(500);
    expect(parseDuration("1 s")).toBe(1000);
  });

  it("rejects what is not a duration", () => {
    for (const bad of ["", "s", "2H", "15min", "-5s", "1e3", "soon"])
      expect(parseDuration(bad), bad).toBeUndefined();
    expect(parseDuration(-5)).toBeUndefined();
    expect(parseDuration(Number.POSITIVE_INFINITY)).toBeUndefined();
  });
});

describe("formatDuration", () => {
  it("picks a readable unit", () => {
    expect(formatDuration(0.42)).toBe("0.4ms");
    expect(formatDuration(250)).toBe("250ms");
    expect(formatDuration(1500)).toBe("1.5s");
    expect(formatDuration(90_000)).toBe("1m30s");
    expect(formatDuration(2 * 3_600_000)).toBe("2h");
    expect(formatDuration(27 * 60_000)).toBe("27m");
    expect(formatDuration(245_000)).toBe("4m05s");
    expect(formatDuration(3_720_000)).toBe("1h02m");
    expect(formatDuration(5_400_000)).toBe("1h30m");
    expect(formatDuration(3 * 86_400_000 + 4 * 3_600_000)).toBe("3d04h");
    expect(formatDuration(-5)).toBe("0ms");
    expect(formatDuration(Number.NaN)).toBe("0ms");
  });

  it("has a clock style for a ticking elapsed time", () => {
    expect(formatDuration(5_900, "clock")).toBe("0:05");
    expect(formatDuration(245_000, "clock")).toBe("4:05");
    expect(formatDuration(3_723_000, "clock")).toBe("1:02:03");
  });
});

describe("durationSuggestion", () => {
  it("offers the spelling gpuplan reads for a unit in another case or form", () => {
    expect(durationSuggestion("10 mins")).toBe("10m");
    expect(durationSuggestion("10min")).toBe("10m");
    expect(durationSuggestion("5M")).toBe("5m");
    expect(durationSuggestion("30 seconds")).toBe("30s");
    expect(durationSuggestion("2 hrs")).toBe("2h");
    expect(durationSuggestion("1.5H")).toBe("1.5h");
    expect(durationSuggestion("3 days")).toBe("3d");
    expect(durationSuggestion("2w")).toBe("14d");
    expect(durationSuggestion("250 msec")).toBe("250ms");
    for (const s of ["10 mins", "5M", "2w"]) expect(parseDuration(durationSuggestion(s)!), s).toBeDefined();
  });

  it("offers nothing for what is not a number and a known unit", () => {
    for (const none of ["soon", "10 fortnights", "5constructor", "1toString", "h", ""])
      expect(durationSuggestion(none), none).toBeUndefined();
  });
});
