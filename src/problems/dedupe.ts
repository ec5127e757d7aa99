import type { Problem } from "./problem.js";

/**
 * One problem per (code, place): a mistake in a matrix template shows up once, not once per
 * expansion, with a note of how many other expansions share it.
 */
export function dedupeProblems(problems: readonly Problem[]): Problem[] {
  const groups = new Map<string, Problem[]>();
  for (const p of problems) {
    const key = [p.severity, p.code, p.file ?? "", p.pointer ?? "", p.offset ?? ""].join("\u0000");
    const list = groups.get(key);
    if (list) list.push(p);
    else groups.set(key, [p]);
  }
  return [...groups.values()].map((list) => {
    const first = list[0]!;
    const others = new Set(list.slice(1).map((p) => p.message)).size;
    const differing = list.slice(1).some((p) => p.message !== first.message);
    return differing ? { ...first, message: `${first.message} (and ${others} more like it)` } : first;
  });
}
