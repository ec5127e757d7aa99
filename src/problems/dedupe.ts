import type { Problem } from "./problem.js";

/**
 * One problem per (code, place): a mistake in a matrix template shows up once, not once per
 * expansion, with a note of how many other expansions share it.
 */
export function dedupeProblems(problems: readonly Problem[]): Problem[] {
  // Found by place (pointer, else offset) first, then by kind along a chain of the groups at that
  // place: a Map keyed by one short string per problem and no array per group unless it has
  // repeats. A joined key of five fields and two arrays per problem made 100,000 problems (a file
  // of unknown keys) cost ~0.2 s, mostly hashing and garbage.
  const atPlace = new Map<string | number, number>();
  const firsts: Problem[] = [];
  const nextAtPlace: number[] = [];
  const repeats = new Map<number, Problem[]>();
  for (const p of problems) {
    // A part of a string (a placeholder) is a place of its own: 40,000 placeholders in one
    // string would otherwise make one chain of 40,000 groups at its pointer, walked per problem.
    const place =
      p.within === undefined ? (p.pointer ?? p.offset ?? "") : `${p.pointer ?? ""}\u0000${p.within.index}`;
    let g = atPlace.get(place);
    let last = -1;
    while (g !== undefined && g !== -1 && !sameKind(firsts[g]!, p)) {
      last = g;
      g = nextAtPlace[g];
    }
    if (g !== undefined && g !== -1) {
      const more = repeats.get(g);
      if (more) more.push(p);
      else repeats.set(g, [p]);
      continue;
    }
    const created = firsts.push(p) - 1;
    nextAtPlace.push(-1);
    if (last === -1) atPlace.set(place, created);
    else nextAtPlace[last] = created;
  }
  return firsts.map((first, g) => {
    const more = repeats.get(g);
    if (!more) return first;
    const others = new Set(more.map((p) => p.message)).size;
    const differing = more.some((p) => p.message !== first.message);
    return differing ? { ...first, message: `${first.message} (and ${others} more like it)` } : first;
  });
}

/** The same code at the same place of the same file (and of the same string). */
const sameKind = (a: Problem, b: Problem): boolean =>
  a.severity === b.severity &&
  a.code === b.code &&
  (a.file ?? "") === (b.file ?? "") &&
  (a.pointer ?? "") === (b.pointer ?? "") &&
  (a.offset ?? "") === (b.offset ?? "") &&
  // Two placeholders in one string are two mistakes; one in a template repeated per expansion is one.
  a.within?.index === b.within?.index;
