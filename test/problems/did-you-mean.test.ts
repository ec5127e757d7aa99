// The bounded edit distance (fast on 100,000 unknown keys) suggests exactly what the plain
// Levenshtein table would.
import fc from "fast-check";
import { expect, it } from "vitest";
import { didYouMean } from "../../src/problems/did-you-mean.js";

function levenshtein(a: string, b: string): number {
  const d = Array.from({ length: a.length + 1 }, (_, i) => [i, ...Array<number>(b.length).fill(0)]);
  for (let j = 1; j <= b.length; j++) d[0]![j] = j;
  for (let i = 1; i <= a.length; i++)
    for (let j = 1; j <= b.length; j++)
      d[i]![j] = Math.min(
        d[i - 1]![j]! + 1,
        d[i]![j - 1]! + 1,
        d[i - 1]![j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1),
      );
  return d[a.length]![b.length]!;
}

function reference(input: string, known: readonly string[]): string | undefined {
  let best: string | undefined;
  let bestDistance = Math.max(2, Math.floor(input.length / 3)) + 1;
  for (const name of known) {
    const d = Math.min(levenshtein(input, name), levenshtein(input.toLowerCase(), name.toLowerCase()) + 0.5);
    if (d < bestDistance) {
      bestDistance = d;
      best = name;
    }
  }
  return best;
}

it("suggests what the full Levenshtein table suggests", () => {
  const word = fc.string({ unit: fc.constantFrom("a", "b", "c", "A", "B", "_", "x"), maxLength: 12 });
  fc.assert(
    fc.property(word, fc.array(word, { maxLength: 8 }), (input, known) => {
      expect(didYouMean(input, known)).toBe(reference(input, known));
    }),
    { numRuns: 2000 },
  );
  expect(didYouMean("vrma", ["vram", "memory"])).toBe("vram");
  expect(didYouMean("Torch", ["torch", "jax"])).toBe("torch");
});

it("answers at once for names too long to be typos (a 60,000-character step id in needs)", () => {
  const id = "j".repeat(60_000);
  const started = performance.now();
  const suggested = didYouMean(`${id}k`, [id]);
  // The table of two such names took seconds (two 1 MB ones: hours).
  expect(performance.now() - started).toBeLessThan(1000);
  expect(suggested).toBeUndefined();
  expect(didYouMean("prepar", [id, "prepare"])).toBe("prepare");
});
