/**
 * Levenshtein distance, small inputs only (names of types, presets, keys). Stops once every
 * entry of a row is past `max` and answers max + 1 then: a file of 100,000 unknown keys asks
 * this 100,000 times, and most names are nowhere near.
 */
let row = new Int32Array(64);

function editDistance(a: string, b: string, max = Number.POSITIVE_INFINITY): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  if (row.length <= b.length) row = new Int32Array(b.length + 1);
  const prev = row;
  for (let j = 0; j <= b.length; j++) prev[j] = j;
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    let rowMin = i;
    for (let j = 1; j <= b.length; j++) {
      const above = prev[j]!;
      prev[j] = Math.min(
        above + 1,
        prev[j - 1]! + 1,
        diag + (a.charCodeAt(i - 1) === b.charCodeAt(j - 1) ? 0 : 1),
      );
      diag = above;
      if (prev[j]! < rowMin) rowMin = prev[j]!;
    }
    if (rowMin > max) return max + 1;
  }
  return prev[b.length]!;
}

/**
 * Longest name compared. The table costs the product of the two lengths, and the distance allowed
 * grows with the input: a 1 MB step id in `needs` against a 1 MB one took hours. No one mistypes
 * a name this long one letter off.
 */
const LONGEST = 256;

/** The closest known name within a distance that still looks like a typo, or undefined. */
export function didYouMean(input: string, known: readonly string[]): string | undefined {
  if (input.length > LONGEST) return undefined;
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(input.length / 3)) + 1;
  const lower = input.toLowerCase();
  for (const name of known) {
    // The distance is at least the difference in length: most names need no table at all.
    if (Math.abs(input.length - name.length) >= bestDistance || name.length > LONGEST) continue;
    const exact = editDistance(input, name, bestDistance);
    const nameLower = name.toLowerCase();
    // Case-insensitively equal text is the same distance, plus the half that ranks it behind.
    const folded =
      lower === input && nameLower === name
        ? exact + 0.5
        : editDistance(lower, nameLower, bestDistance) + 0.5;
    const d = Math.min(exact, folded);
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
    }
  }
  return best;
}
