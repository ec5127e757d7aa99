import { describe, expect, it } from "vitest";
import { loadPaint, stripColor } from "../../src/ui/paint.js";
import { formatTable } from "../../src/ui/table.js";

const columns = [{ header: "NAME" }, { header: "SIZE", align: "right" as const }, { header: "NOTE" }];

describe("formatTable", () => {
  it("pads columns two spaces apart, right-aligns numbers, trims trailing blanks", () => {
    expect(
      formatTable(columns, [
        ["a", "1 GiB", ""],
        ["longer", "800 MiB", "x"],
      ]),
    ).toEqual(["NAME       SIZE  NOTE", "a         1 GiB", "longer  800 MiB  x"]);
  });

  it("measures painted cells without their colour, and dims the header when it paints", async () => {
    const paint = await loadPaint(1);
    const lines = formatTable(columns, [[paint.red("a"), "1", "b"]], { paint, indent: "  " });
    expect(lines[0]).toBe(paint.dim("  NAME  SIZE  NOTE"));
    expect(lines.map(stripColor)).toEqual(["  NAME  SIZE  NOTE", "  a        1  b"]);
  });

  it("leaves the header out when asked, and sizes the columns by the rows alone", () => {
    expect(formatTable(columns, [["a", "1", "b"]], { header: false })).toEqual(["a  1  b"]);
  });
});
