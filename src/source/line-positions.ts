/** Offsets in a text to 1-based lines and columns. */

/**
 * 1-based line and column of each offset, counting newlines once up to the last of them: no
 * table of every line's start (150 MB of newlines would need one of 150 million). Line 1 starts
 * after a byte-order mark, as editors show it: the mark is no character of the line, and counting
 * it put every problem on line 1 a column too far (`version: 2` at 1:11).
 */
export function linePositions(
  text: string,
  offsets: readonly number[],
): Map<number, { line: number; column: number }> {
  const positions = new Map<number, { line: number; column: number }>();
  let line = 1;
  let start = firstLineStart(text);
  let newline = text.indexOf("\n");
  for (const offset of [...new Set(offsets)].sort((a, b) => a - b)) {
    while (newline !== -1 && newline < offset) {
      line++;
      start = newline + 1;
      newline = text.indexOf("\n", start);
    }
    // An offset at the mark itself (a file-wide problem at 0) is column 1.
    positions.set(offset, { line, column: Math.max(offset, start) - start + 1 });
  }
  return positions;
}

/** Where line 1's characters start: after a byte-order mark, which editors do not show. */
export function firstLineStart(text: string): number {
  return text.charCodeAt(0) === 0xfeff ? 1 : 0;
}
