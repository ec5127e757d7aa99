/**
 * A cycle in a pipeline's `needs`, for compile (a located needs-cycle) and for a plan edited by
 * hand (plan-inconsistent). Depth-first without recursion: a chain of 100,000 steps each needing
 * the next would overflow the call stack.
 */
export function findNeedsCycle(
  steps: readonly { id: string; needs: readonly string[] }[],
): string[] | undefined {
  const needsOf = new Map(steps.map((s) => [s.id, s.needs]));
  const state = new Map<string, "visiting" | "done">();
  for (const root of steps) {
    if (state.has(root.id)) continue;
    // The path from the root, each with how many of its needs are looked at.
    const path: { id: string; next: number }[] = [{ id: root.id, next: 0 }];
    state.set(root.id, "visiting");
    while (path.length > 0) {
      const top = path.at(-1)!;
      const need = needsOf.get(top.id)?.[top.next++];
      if (need === undefined) {
        state.set(top.id, "done");
        path.pop();
      } else if (state.get(need) === "visiting") {
        const ids = path.map((p) => p.id);
        return [...ids.slice(ids.indexOf(need)), need];
      } else if (!state.has(need) && needsOf.has(need)) {
        state.set(need, "visiting");
        path.push({ id: need, next: 0 });
      }
    }
  }
  return undefined;
}
