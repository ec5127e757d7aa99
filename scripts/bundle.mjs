#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js) into dist/bundle/ with one chunk per lazily
// imported command. Node 20 has no module compile cache, and resolving and reading ~100 small
// ESM files (yaml alone is ~60) costs more than running a small compile; one bundle roughly
// halves start-up. koffi stays external: it is native and only loaded by the detect child.
// The chunks are then turned into CommonJS, file by file, keeping esbuild's chunk graph (esbuild
// splits only ESM): Node 20 loads an ES module through asynchronous reads, URL resolution and
// linking, a CommonJS one with one synchronous read — ~12% less CPU for a small compile
// (docs/decisions/0007-start-up.md). A chunk that imports an ES-only package (ink, react) stays
// an ES module (.mjs), reached by a real import().
import { mkdirSync, rmSync, writeFileSync } from "node:fs";
import { basename, dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build, transform } from "esbuild";
import { bundleDetectEntries } from "./bundle-detect.mjs";
import { writePacks } from "./bundle-packs.mjs";
import { trainCodeCache } from "./train-code-cache.mjs";

/**
 * commander requires node:child_process at load, for executable subcommands gpuplan never has;
 * child_process brings net, dgram, stream and readline with it (~40 built-in modules, a few
 * milliseconds of every start: docs/decisions/0007-start-up.md). commander gets a stand-in that
 * requires the real module only if spawn is ever called.
 */
const lazyChildProcessForCommander = {
  name: "lazy-child-process-for-commander",
  setup(b) {
    b.onResolve({ filter: /^node:child_process$/ }, (args) =>
      /[\\/]commander[\\/]lib[\\/]command\.js$/.test(args.importer)
        ? { path: "child_process", namespace: "gpuplan-lazy" }
        : undefined,
    );
    b.onLoad({ filter: /.*/, namespace: "gpuplan-lazy" }, () => ({
      contents: 'module.exports = { spawn: (...a) => require("node:child_process").spawn(...a) };',
      loader: "js",
    }));
  },
};

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist/bundle");
rmSync(outdir, { recursive: true, force: true });
const { outputFiles } = await build({
  entryPoints: [join(root, "dist/cli/main.js")],
  outdir,
  bundle: true,
  splitting: true,
  format: "esm",
  platform: "node",
  target: "node20.19",
  // yaml is required lazily (only to locate problems) from node_modules.
  external: ["koffi", "ink", "react", "yaml"],
  logLevel: "warning",
  legalComments: "none",
  // Less to parse at every start; identifiers are kept so internal-error stacks stay readable.
  minifyWhitespace: true,
  minifySyntax: true,
  plugins: [lazyChildProcessForCommander],
  write: false,
});
await writeCommonJs(outputFiles);
writePacks(outdir);
await bundleDetectEntries();
// Last: it runs the commands it caches (docs/decisions/0014-build-time-code-cache.md).
trainCodeCache();

/** The chunks as CommonJS (see the header); the ones that import ES-only packages as ES modules. */
async function writeCommonJs(files) {
  mkdirSync(outdir, { recursive: true });
  writeFileSync(join(outdir, "package.json"), '{ "type": "commonjs" }\n');
  const esOnly = new Set(
    files.filter((f) => /\bfrom\s*"(ink|react)(\/[^"]*)?"/.test(f.text)).map((f) => basename(f.path)),
  );
  const renamed = (name) => (esOnly.has(name) ? name.replace(/\.js$/, ".mjs") : name);
  for (const file of files) {
    const name = basename(file.path);
    if (esOnly.has(name)) {
      // Its own imports of chunks stay static: an ES module may import CommonJS (named exports
      // are found from the `0 && (module.exports = …)` line esbuild writes for Node).
      writeFileSync(join(outdir, renamed(name)), commonJsRequire(file.text));
      continue;
    }
    // A lazily loaded chunk: require() inside a promise, as import() would resolve (ES-only
    // chunks keep a real import()).
    const text = file.text.replace(/\bimport\("\.\/([^"]+)"\)/g, (_, target) =>
      esOnly.has(target)
        ? `import("./${renamed(target)}")`
        : `Promise.resolve().then(() => require("./${target}"))`,
    );
    const { code } = await transform(text, {
      format: "cjs",
      platform: "node",
      target: "node20.19",
      minifyWhitespace: true,
      minifySyntax: true,
      // import.meta.url (finding files beside the code) from the CommonJS file's own path.
      define: { "import.meta.url": "__gpuplanModuleUrl" },
    });
    if (/\bimport\.meta\b|\bimport\("\.\/[^"]+\.js"\)/.test(code))
      throw new Error(`${name}: ESM left in the CommonJS chunk`);
    // bin/code-cache.js compiles a chunk holding an import() from source, and that chunk's own
    // require()s then go through Node's full resolution (~0.1 ms each): a command chunk with one
    // lost ~4 ms of its start. Built-ins and koffi are reached by process.getBuiltinModule or
    // require; only a chunk that opens an ES-only chunk may keep an import(), and nothing else.
    const imports = [...code.matchAll(/\bimport\(([^)]*)\)/g)].map((m) => m[1]);
    if (
      imports.some((target) => !/^"\.\/[^"]+\.mjs"$/.test(target)) ||
      (imports.length > 0 && code.length > 2048)
    )
      throw new Error(
        `${name}: import(${imports.join(", ")}) in a CommonJS chunk of ${code.length} bytes; such a chunk loses its code cache (scripts/bundle.mjs)`,
      );
    // Only the few chunks that use import.meta.url get its definition: the URL costs node:url and
    // a pathToFileURL at load, which the other ~40 chunks a command loads need not pay.
    const url = code.includes("__gpuplanModuleUrl")
      ? 'const __gpuplanModuleUrl = require("node:url").pathToFileURL(__filename).href;\n'
      : "";
    writeFileSync(join(outdir, name), url + code);
  }
}

/** An ES chunk gets a require() of its own (commander and ajv's runtime call require). */
function commonJsRequire(text) {
  return /\brequire\(/.test(text)
    ? `import { createRequire as __gpuplanCreateRequire } from "node:module"; const require = __gpuplanCreateRequire(import.meta.url);\n${text}`
    : text;
}
