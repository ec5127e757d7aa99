// The report's time axis ticks (src/ui/report/client/ticks.ts): a round step at about one every
// 90 px, and a bounded number of ticks whatever the span — a year-9999 timestamp once asked for a
// tick a day across 8,000 years.
import { describe, expect, it } from "vitest";
import { MAX_TICKS, tickStep, ticks } from "../../../src/ui/report/client/ticks.js";

const YEAR = 365 * 864e5;

describe("time axis ticks", () => {
  it("picks a round step for about one tick every 90 px", () => {
    expect(tickStep(10_000, 900)).toBe(1000);
    expect(tickStep(3_600_000, 1200)).toBe(300_000);
    expect(ticks(10_000, 900)).toEqual([0, 1e3, 2e3, 3e3, 4e3, 5e3, 6e3, 7e3, 8e3, 9e3, 10e3]);
  });

  it("past a day, steps of 1, 2 or 5 × 10^k days: a span of years has a dozen ticks, not one a day", () => {
    expect(tickStep(30 * 864e5, 900)).toBe(5 * 864e5);
    for (const span of [YEAR, 280 * YEAR, 8000 * YEAR, Date.parse("9999-12-31T23:59:59.999Z")]) {
      const list = ticks(span, 1200);
      expect(list.length, String(span)).toBeLessThanOrEqual(Math.ceil(1200 / 90) + 1);
      expect(list.length).toBeGreaterThan(1);
    }
  });

  it("never more than MAX_TICKS, however wide the drawing; nothing odd from a span that is not a number", () => {
    expect(ticks(1000, 10_000_000).length).toBeLessThanOrEqual(MAX_TICKS + 1);
    expect(ticks(Number.POSITIVE_INFINITY, 1200)).toEqual([0]);
    expect(ticks(Number.NaN, 1200)).toEqual([0]);
    expect(ticks(0, 1200)).toEqual([0]);
  });
});
