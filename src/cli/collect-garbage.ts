/**
 * A full garbage collection between the phases of a big compile. V8 sizes the heap from what was
 * live at its last full collection and lets it grow to about twice that before the next: a
 * compile of 20,000 × 10 steps had its last one while the pipeline file was still being read, so
 * the parsed file, the templates, the expanded pipelines and then the plan all piled up to
 * ~540 MB of heap (630 MB RSS) though at most ~250 MB was ever live at once. Collecting after the
 * file is read and after the plan is made keeps the peak near what is live
 * (docs/decisions/0015-compact-plans.md). Node exposes gc() only behind --expose-gc, a flag V8
 * also takes at run time; where it does not, nothing is collected early. node:v8 and node:vm are
 * loaded only for a big compile, so a small one starts as fast as before.
 */
/** Below this much pipeline text a compile's heap stays small; collecting would only cost time. */
export const BIG_INPUT_CHARS = 8 * 1024 * 1024;

let gc: (() => void) | null | undefined;

/** Collect garbage now, if V8 lets us. */
export async function collectGarbage(): Promise<void> {
  if (gc === undefined) {
    try {
      // Not import(): a bundle chunk holding one loses its code cache (scripts/bundle.mjs).
      const { setFlagsFromString } = process.getBuiltinModule("node:v8");
      const { runInNewContext } = process.getBuiltinModule("node:vm");
      setFlagsFromString("--expose-gc");
      const found: unknown = runInNewContext("typeof gc === 'function' ? gc : null");
      gc = typeof found === "function" ? (found as () => void) : null;
    } catch {
      gc = null;
    }
  }
  gc?.();
}
