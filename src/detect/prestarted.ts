/**
 * Where pre-started probe children, and the plan they were started for, wait for detect() (see
 * prestart.ts); and where a run's checked child, once it has answered, waits for the run's memory
 * sampler (spawn-child.ts `serve`, probe-server.ts). bin/gpuplan.js's prestart bundle and the
 * detect bundle each hold their own copy of the detect modules, so the hand-over goes through
 * globals rather than module state.
 */
import type { ChildProcess } from "node:child_process";
import { letGo } from "./probe-groups.js";
import type { VendorProbePlan } from "./probe-plan.js";
import type { StartedChild } from "./spawn-child.js";

const SLOT = Symbol.for("gpuplan.detect.prestartedChildren");
const PLAN = Symbol.for("gpuplan.detect.prestartPlan");
const SERVING = Symbol.for("gpuplan.detect.servingChildren");
type Slot = {
  [SLOT]?: Map<string, StartedChild>;
  [PLAN]?: { env: NodeJS.ProcessEnv; plan: VendorProbePlan };
  [SERVING]?: Map<string, ChildProcess>;
};

/** Leave the plan made for `env`, so that detect() in the same process need not search again. */
export function offerPlan(env: NodeJS.ProcessEnv, plan: VendorProbePlan): void {
  (globalThis as Slot)[PLAN] = { env, plan };
}

/** The plan offered for this very environment object and CUDA choice, once; null otherwise. */
export function claimPlan(env: NodeJS.ProcessEnv, cudaOnlyIfNeeded: boolean): VendorProbePlan | null {
  const offered = (globalThis as Slot)[PLAN];
  delete (globalThis as Slot)[PLAN];
  return offered?.env === env && offered.plan.cudaOnlyIfNeeded === cudaOnlyIfNeeded ? offered.plan : null;
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

/**
 * Leave a child that has answered and now waits on stdin to serve rounds of the probes `key`
 * names (probe-server.ts adopts it). It leaves the slot when it exits.
 */
export function offerServing(key: string, child: ChildProcess): void {
  const global = globalThis as Slot;
  global[SERVING] ??= new Map();
  const slot = global[SERVING];
  slot.get(key)?.stdin?.end();
  slot.set(key, child);
  child.once("exit", () => {
    if (slot.get(key) === child) slot.delete(key);
  });
}

/** The serving child for `key`, still running, once; null otherwise. */
export function claimServing(key: string): ChildProcess | null {
  const slot = (globalThis as Slot)[SERVING];
  const child = slot?.get(key);
  slot?.delete(key);
  return child && child.exitCode === null && child.signalCode === null ? child : null;
}

/**
 * Let every unclaimed serving child go (a run that reads no memory): probe-groups.ts letGo.
 */
export function releaseServing(): void {
  const slot = (globalThis as Slot)[SERVING];
  if (!slot) return;
  for (const child of slot.values()) letGo(child);
  slot.clear();
}
