// Writes dist/bundle/packs/: for the CLI's entry (main.js) and for each chunk loaded lazily
// (the command chunks compile-…, run-…, detect-…, and their lazy parts), one file holding every CommonJS chunk that chunk requires
// at load, each as the function Node would wrap it in. bin/code-cache.js compiles a pack as one
// script with one code cache instead of ~60 files each read, compiled and cached on its own: on
// Node 20 a small compile loaded its 61 chunks in ~13 ms from their caches, and the same code
// from one pack in ~7 ms (docs/decisions/0020-one-script-per-command.md).
// Chunks loaded lazily further down (locate-…, a dry run's text) get packs of their own the same
// way. A pack leaves out what is surely loaded before its root (main.js's pack, always first; a
// command's pack before its lazy parts); what it holds that is already running is skipped.
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";

/** `require("./chunk.js")` at a chunk's top level, and the lazy form scripts/bundle.mjs writes for import(). */
const STATIC = /(?<!\(\)=>\s*)\brequire\("\.\/([^"]+\.js)"\)/g;
const LAZY = /Promise\.resolve\(\)\.then\(\(\)\s*=>\s*require\("\.\/([^"]+\.js)"\)\)/g;

/** The same wrapper as Node's (and bin/code-cache.js's): a chunk sees the same five names. */
const HEAD = "function (exports, require, module, __filename, __dirname) {\n";

export function writePacks(outdir) {
  const text = new Map(
    readdirSync(outdir)
      .filter((f) => f.endsWith(".js"))
      .map((f) => [f, readFileSync(join(outdir, f), "utf8")]),
  );
  // A chunk with an import() (the live view's opener) is compiled by Node from its own file
  // (bin/code-cache.js): never packed.
  const packable = (name) => text.has(name) && !text.get(name).includes("import(");
  const closure = (root) => {
    const seen = new Set();
    const visit = (name) => {
      if (seen.has(name) || !text.has(name)) return;
      seen.add(name);
      for (const m of text.get(name).matchAll(STATIC)) visit(m[1]);
    };
    visit(root);
    return seen;
  };
  // What is surely loaded before each root runs: nothing before main.js; before a chunk another
  // pack's members load lazily, that pack's root's and everything surely loaded before it — the
  // part common to every pack that can load it. Sets only shrink, so this ends.
  const before = new Map([["main.js", new Set()]]);
  for (let changed = true; changed; ) {
    changed = false;
    for (const [root, loaded] of [...before]) {
      const members = closure(root);
      const after = new Set([...loaded, ...members]);
      for (const name of members)
        for (const m of text.get(name).matchAll(LAZY)) {
          const target = m[1];
          if (!text.has(target) || after.has(target)) continue;
          const known = before.get(target);
          const common = known === undefined ? after : new Set([...known].filter((n) => after.has(n)));
          if (known === undefined || common.size !== known.size) {
            before.set(target, common);
            changed = true;
          }
        }
    }
  }
  const packs = [...before]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([root, loaded]) => [root, [...closure(root)].filter((n) => !loaded.has(n))]);

  const dir = join(outdir, "packs");
  mkdirSync(dir, { recursive: true });
  const written = [];
  for (const [root, members] of packs) {
    const names = members.filter(packable);
    // A pack of one chunk would only add a file to read.
    if (!names.includes(root) || names.length < 2) continue;
    // A JSON array [name, wrapper, name, wrapper, …]: the script's value when it runs.
    const body = names.map((n) => `${JSON.stringify(n)},${HEAD}${text.get(n)}\n}`).join(",\n");
    writeFileSync(join(dir, root), `[\n${body}\n]\n`);
    written.push({ root, chunks: names.length });
  }
  return written;
}
