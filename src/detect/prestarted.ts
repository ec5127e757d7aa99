/**
 * Where pre-started probe children, and the plan they were started for, wait for detect() (see
 * prestart.ts). bin/gpuplan.js's prestart bundle and the detect bundle each hold their own copy
 * of the detect modules, so the hand-over goes through globals rather than module state.
 */
import type { VendorProbePlan } from "./probe-plan.js";
import type { StartedChild } from "./spawn-child.js";

const SLOT = Symbol.for("gpuplan.detect.prestartedChildren");
const PLAN = Symbol.for("gpuplan.detect.prestartPlan");
type Slot = {
  [SLOT]?: Map<string, StartedChild>;
  [PLAN]?: { env: NodeJS.ProcessEnv; plan: VendorProbePlan };
};

/** Leave the plan made for `env`, so that detect() in the same process need not search again. */
export function offerPlan(env: NodeJS.ProcessEnv, plan: VendorProbePlan): void {
  (globalThis as Slot)[PLAN] = { env, plan };
}

/** The plan offered for this very environment object, once; null otherwise. */
export function claimPlan(env: NodeJS.ProcessEnv): VendorProbePlan | null {
  const offered = (globalThis as Slot)[PLAN];
  delete (globalThis as Slot)[PLAN];
  return offered?.env === env ? offered.plan : null;
}

/** Leave `children` (keyed by StartedChild.key) for detect(); any still here at exit are killed. */
export function offerPrestarted(children: Map<string, StartedChild>): void {
  (globalThis as Slot)[SLOT] = children;
  process.once("exit", () => {
    for (const child of (globalThis as Slot)[SLOT]?.values() ?? []) child.kill();
  });
}

/** Take the pre-started children; later calls get none. */
export function claimPrestarted(): Map<string, StartedChild> {
  const children = (globalThis as Slot)[SLOT] ?? new Map<string, StartedChild>();
  delete (globalThis as Slot)[SLOT];
  return children;
}
