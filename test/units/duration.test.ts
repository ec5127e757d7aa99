import { describe, expect, it } from "vitest";
import { formatDuration, parseDuration } from "../../src/units/duration.js";

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
    expect(formatDuration(250)).toBe("250ms");
    expect(formatDuration(1500)).toBe("1.5s");
    expect(formatDuration(90_000)).toBe("1.5m");
    expect(formatDuration(2 * 3_600_000)).toBe("2h");
    expect(formatDuration(5_400_000)).toBe("1.5h");
  });
});
