import { describe, expect, it } from "vitest";
import { formatSize, parseSize, sizeSuggestions } from "../../src/units/size.js";

const GiB = 1024 ** 3;

describe("parseSize", () => {
  it("reads binary units as powers of 1024 and SI units as powers of 1000", () => {
    expect(parseSize("12GiB")).toBe(12 * GiB);
    expect(parseSize("16GB")).toBe(16e9);
    expect(parseSize("16GB")).toBeLessThan(parseSize("16GiB")!);
    expect(parseSize("800MiB")).toBe(800 * 1024 ** 2);
    expect(parseSize("1KiB")).toBe(1024);
    expect(parseSize("1kB")).toBe(1000);
    expect(parseSize("1KB")).toBe(1000);
    expect(parseSize("2TiB")).toBe(2 * 1024 ** 4);
    expect(parseSize("3TB")).toBe(3e12);
  });

  it("takes plain byte counts as numbers or digit strings", () => {
    expect(parseSize(512)).toBe(512);
    expect(parseSize(0)).toBe(0);
    expect(parseSize("512")).toBe(512);
    expect(parseSize("512B")).toBe(512);
  });

  it("accepts decimals and a space before the unit, rounding to whole bytes", () => {
    expect(parseSize("1.5GiB")).toBe(1.5 * GiB);
    expect(parseSize("0.5MB")).toBe(500_000);
    expect(parseSize("12 GiB")).toBe(12 * GiB);
    expect(parseSize(" 12GiB ")).toBe(12 * GiB);
    expect(Number.isInteger(parseSize("1.3KiB"))).toBe(true);
  });

  it("rejects what is not a size", () => {
    for (const bad of ["", " ", "12G", "12gib", "GiB", "-1", "1e3", "twelve GiB", "12 GiB extra"]) {
      expect(parseSize(bad), bad).toBeUndefined();
    }
    expect(parseSize(-1)).toBeUndefined();
    expect(parseSize(1.5)).toBeUndefined();
    expect(parseSize(Number.NaN)).toBeUndefined();
    expect(parseSize(2 ** 60)).toBeUndefined();
    expect(parseSize("99999999999TiB")).toBeUndefined();
  });
});

describe("formatSize", () => {
  it("prints binary units", () => {
    expect(formatSize(14 * GiB)).toBe("14 GiB");
    expect(formatSize(800 * 1024 ** 2)).toBe("800 MiB");
    expect(formatSize(1.5 * GiB)).toBe("1.5 GiB");
    expect(formatSize(512)).toBe("512 B");
    expect(formatSize(0)).toBe("0 B");
    // One decimal below 100, none above, never a trailing ".0".
    expect(formatSize(30.04 * GiB)).toBe("30 GiB");
    expect(formatSize(123.4 * GiB)).toBe("123 GiB");
  });

  it("round-trips through parseSize for whole units", () => {
    for (const text of ["14GiB", "800MiB", "3KiB"]) {
      expect(parseSize(formatSize(parseSize(text)!).replace(" ", ""))).toBe(parseSize(text));
    }
  });
});

describe("sizeSuggestions", () => {
  it("offers the spelling gpuplan reads for a unit in another case or form", () => {
    expect(sizeSuggestions("12gib")).toEqual(["12GiB"]);
    expect(sizeSuggestions("12 gib")).toEqual(["12GiB"]);
    expect(sizeSuggestions("1.5Gi")).toEqual(["1.5GiB"]);
    expect(sizeSuggestions("16gb")).toEqual(["16GB"]);
    expect(sizeSuggestions("12 gigabytes")).toEqual(["12GB"]);
    // A bare letter is read as 1024 by Docker and Slurm, as 1000 by others: both are offered.
    expect(sizeSuggestions("12G")).toEqual(["12GiB", "12GB"]);
    for (const s of sizeSuggestions("12g")) expect(parseSize(s), s).toBeDefined();
  });

  it("offers nothing for what is not a number and a known unit", () => {
    for (const none of ["twelve GiB", "12 apples", "12constructor", "12toString", "GiB", "1e3GiB", ""])
      expect(sizeSuggestions(none), none).toEqual([]);
  });
});
