// CommonJS (bin/package.json). V8's code cache for gpuplan's own files in dist/, on a Node that has
// no module compile cache of its own (before 22.1, where bin/gpuplan.js turns that one on instead).
// Compiling the code a command needs was the largest part of gpuplan's start-up on Node 20
// (docs/decisions/0014-build-time-code-cache.md). The build runs a few hermetic commands
// (scripts/train-code-cache.mjs) that write, for each file of dist/ they loaded, the bytecode V8
// had compiled by the end — functions run lazily included — under dist/code-cache/<node>-<arch>/;
// every later start compiles those files from it instead of from source.
// The cache is build output beside the code it was made from, written by whoever wrote that code,
// so it adds nothing to trust. V8 refuses a cache made by another V8 version, with other flags or
// for a source of another length (then the file is compiled from source as before); the folder is
// named by Node version so that another Node does not even read it.
"use strict";
const fs = require("node:fs");
const path = require("node:path");
const Module = require("node:module");

const DIST = path.join(__dirname, "..", "dist");
const CACHE_DIR = path.join(DIST, "code-cache", `${process.version}-${process.arch}`);
const BUNDLE = path.join(DIST, "bundle");
const SIBLING = /^\.\/[\w.-]+\.js$/;
// One line of its own, so that the file's lines and columns are the ones V8 reports (lineOffset).
const HEAD = "(function (exports, require, module, __filename, __dirname) {\n";
const TAIL = "\n})";

let installed = false;

/**
 * Compile the CommonJS files of dist/ with the cache written for this Node. `produce` (the build's
 * training runs only) also compiles files that have none and writes every cache again at exit.
 */
module.exports = function useCodeCache(produce = false) {
  if (installed || (!produce && !fs.existsSync(CACHE_DIR))) return;
  installed = true;
  const vm = require("node:vm");
  const compile = Module.prototype._compile;
  const produced = new Map();
  Module.prototype._compile = function compileWithCache(content, filename, format) {
    // import() from a script compiled by vm needs a callback Node 20 calls experimental (and one
    // that a cached script loses): the few files with an import() are compiled as before.
    const file = format === "module" || content.includes("import(") ? null : cacheFileOf(filename);
    let cachedData;
    if (file !== null) {
      try {
        cachedData = fs.readFileSync(file);
      } catch {
        // No cache for this file: compiled from source (and, when producing, cached from now on).
      }
    }
    if (file === null || (cachedData === undefined && !produce))
      return compile.call(this, content, filename, format);
    const script = new vm.Script(HEAD + content + TAIL, {
      filename,
      lineOffset: -1,
      cachedData,
    });
    if (produce) produced.set(file, script);
    const dir = path.dirname(filename);
    const inBundle = dir === BUNDLE;
    const require = (id) =>
      inBundle && SIBLING.test(id) ? loadSibling(this, dir + id.slice(1)) : this.require(id);
    require.resolve = (request, options) => Module._resolveFilename(request, this, false, options);
    require.cache = Module._cache;
    require.main = process.mainModule;
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(this.exports, this.exports, require, this, filename, path.dirname(filename));
  };
  if (produce)
    process.on("exit", () => {
      fs.mkdirSync(CACHE_DIR, { recursive: true });
      // After the command ran: the cache then holds every function it compiled, not only the top level.
      for (const [file, script] of produced) fs.writeFileSync(file, script.createCachedData());
    });
};

/**
 * A chunk of the bundle requiring another (`require("./chunk-X.js")`), loaded without Node's
 * resolution: the file's name is known, so the stat, realpath and package.json lookups Node makes
 * for every require (~0.1 ms each, ~45 chunks a command) are skipped. Otherwise what
 * Module._load does for a CommonJS file: one module object per file in Module._cache (a cycle
 * gets the partly filled exports), removed again when its top level throws.
 */
function loadSibling(parent, filename) {
  const cached = Module._cache[filename];
  if (cached !== undefined) return cached.exports;
  const m = new Module(filename, parent);
  m.filename = filename;
  m.paths = parent.paths;
  Module._cache[filename] = m;
  let threw = true;
  try {
    m._compile(fs.readFileSync(filename, "utf8"), filename, "commonjs");
    threw = false;
  } finally {
    if (threw) delete Module._cache[filename];
  }
  m.loaded = true;
  return m.exports;
}

/** Where the cache of a file of dist/ lives, or null for any other file (string work only: no path.relative). */
function cacheFileOf(filename) {
  if (!filename.startsWith(DIST + path.sep)) return null;
  const name = filename
    .slice(DIST.length + 1)
    .split(path.sep)
    .join("__");
  return CACHE_DIR + path.sep + name;
}
