/** Offsets in a text to 1-based lines and columns. */

/**
 * 1-based line and column of each offset, counting newlines once up to the last of them: no
 * table of every line's start (150 MB of newlines would need one of 150 million).
 */
export function linePositions(
  text: string,
  offsets: readonly number[],
): Map<number, { line: number; column: number }> {
  const positions = new Map<number, { line: number; column: number }>();
  let line = 1;
  let start = 0;
  let newline = text.indexOf("\n");
  for (const offset of [...new Set(offsets)].sort((a, b) => a - b)) {
    while (newline !== -1 && newline < offset) {
      line++;
      start = newline + 1;
      newline = text.indexOf("\n", start);
    }
    positions.set(offset, { line, column: offset - start + 1 });
  }
  return positions;
}
