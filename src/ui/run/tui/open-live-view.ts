/**
 * The live view's module, behind a module of its own: the live view is bundled as an ES module
 * (ink and react are ES-only), reached by a real import(), and a bundle chunk holding an import()
 * is compiled without its code cache (scripts/bundle.mjs). Here that import() sits in a chunk of a
 * few hundred bytes that only `--ui tui` loads, not in the run command's.
 */
export async function loadLiveView(): Promise<typeof import("./live-view.js")> {
  return import("./live-view.js");
}
