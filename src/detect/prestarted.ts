/**
 * Where pre-started probe children wait for detect() (see prestart.ts). The bin shim and the CLI
 * bundle each hold their own copy of the detect modules, so the hand-over goes through a global
 * rather than module state.
 */
import type { StartedChild } from "./spawn-child.js";

const SLOT = Symbol.for("gpuplan.detect.prestartedChildren");
type Slot = { [SLOT]?: Map<string, StartedChild> };

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
