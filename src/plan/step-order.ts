/**
 * The order a pipeline's steps run in, one at a time: `needs` first, then the file's order among
 * the steps that are ready (Kahn). The executor runs them in this order and `--dry-run` lists them
 * in it, so what a dry run shows is what a run does.
 */
import type { PlannedStep } from "../schema-types/plan.js";

/**
 * Needs naming no step of the pipeline are ignored (compile reports them); a cycle keeps the
 * remaining steps in file order (compile rejects cycles, so a plan never has one).
 */
export function stepOrder(steps: readonly PlannedStep[]): PlannedStep[] {
  const ids = new Set(steps.map((s) => s.id));
  const done = new Set<string>();
  const order: PlannedStep[] = [];
  const remaining = [...steps];
  while (remaining.length > 0) {
    const i = remaining.findIndex((s) => s.needs.every((n) => done.has(n) || !ids.has(n)));
    const [next] = remaining.splice(i >= 0 ? i : 0, 1);
    order.push(next!);
    done.add(next!.id);
  }
  return order;
}
