/**
 * The one table of gpuplan's human output (detect, locks, warm workers, targets, presets): a header
 * row, columns two spaces apart, numbers right-aligned, trailing blanks trimmed — the shape
 * nvidia-smi, squeue and docker ps users read at a glance. Cells may already be painted; widths are
 * measured without the colour. Cells are shown as given: escape outside text first (src/text/safe-text.ts).
 */
import { noPaint, type Paint, stripColor } from "./paint.js";

export interface TableColumn {
  header: string;
  /** "right" for numbers and sizes, so their digits line up. */
  align?: "left" | "right";
}

export interface TableOptions {
  /** The header is dimmed when it paints. */
  paint?: Paint;
  /** Put before every line (a table nested under a heading). */
  indent?: string;
  /** false: rows only, for a short list whose heading line says what the columns are. */
  header?: boolean;
}

const GAP = "  ";

/** The table as lines: the header first (unless `header: false`), then one line per row (a missing cell is empty). */
export function formatTable(
  columns: readonly TableColumn[],
  rows: readonly (readonly string[])[],
  options: TableOptions = {},
): string[] {
  const paint = options.paint ?? noPaint;
  const indent = options.indent ?? "";
  const withHeader = options.header ?? true;
  const widths = columns.map((c, i) =>
    Math.max(withHeader ? visibleWidth(c.header) : 0, ...rows.map((r) => visibleWidth(r[i] ?? ""))),
  );
  const line = (cells: readonly string[]): string =>
    `${indent}${columns
      .map((c, i) => pad(cells[i] ?? "", widths[i]!, c.align ?? "left"))
      .join(GAP)}`.trimEnd();
  const body = rows.map(line);
  return withHeader ? [paint.dim(line(columns.map((c) => c.header))), ...body] : body;
}

/** Columns a string takes on a terminal, colour left out (one per code point). */
export function visibleWidth(text: string): number {
  let n = 0;
  for (const _ of stripColor(text)) n++;
  return n;
}

function pad(cell: string, width: number, align: "left" | "right"): string {
  const fill = " ".repeat(Math.max(0, width - visibleWidth(cell)));
  return align === "right" ? `${fill}${cell}` : `${cell}${fill}`;
}
