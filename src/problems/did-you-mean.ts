/** Levenshtein distance, small inputs only (names of types, presets, keys). */
function editDistance(a: string, b: string): number {
  const prev = Array.from({ length: b.length + 1 }, (_, i) => i);
  for (let i = 1; i <= a.length; i++) {
    let diag = prev[0]!;
    prev[0] = i;
    for (let j = 1; j <= b.length; j++) {
      const above = prev[j]!;
      prev[j] = Math.min(above + 1, prev[j - 1]! + 1, diag + (a[i - 1] === b[j - 1] ? 0 : 1));
      diag = above;
    }
  }
  return prev[b.length]!;
}

/** The closest known name within a distance that still looks like a typo, or undefined. */
export function didYouMean(input: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(input.length / 3)) + 1;
  for (const name of known) {
    // The distance is at least the difference in length: most names need no table at all.
    if (Math.abs(input.length - name.length) >= bestDistance) continue;
    const d = Math.min(
      editDistance(input, name),
      editDistance(input.toLowerCase(), name.toLowerCase()) + 0.5,
    );
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
    }
  }
  return best;
}
