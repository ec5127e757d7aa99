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
const PACKS = path.join(BUNDLE, "packs");
const SIBLING = /^\.\/[\w.-]+\.js$/;
// One line of its own, so that the file's lines and columns are the ones V8 reports (lineOffset).
const HEAD = "(function (exports, require, module, __filename, __dirname) {\n";
const TAIL = "\n})";

let installed = false;
let produce = false;
/** The scripts compiled in produce mode, by the cache file each one's cache goes to at exit. */
const produced = new Map();
/** Each chunk a loaded pack holds, by file name: the wrapper function to run it with. */
const packed = new Map();
/** The files a pack was looked for (found or not), so that each is looked for once. */
const packsSought = new Set();
let vm;

/**
 * Compile the CommonJS files of dist/ with the cache written for this Node. `produce` (the build's
 * training runs only) also compiles files that have none and writes every cache again at exit.
 */
module.exports = function useCodeCache(producing = false) {
  if (installed || (!producing && !fs.existsSync(CACHE_DIR))) return;
  installed = true;
  produce = producing;
  vm = require("node:vm");
  const compile = Module.prototype._compile;
  Module.prototype._compile = function compileWithCache(content, filename, format) {
    // A chunk of the bundle that a pack holds (main.js, a command's chunk): run from the pack.
    if (format !== "module" && inPack(filename)) return runFromPack(this, filename);
    // import() from a script compiled by vm needs a callback Node 20 calls experimental (and one
    // that a cached script loses): the few files with an import() are compiled as before.
    const file = format === "module" || content.includes("import(") ? null : cacheFileOf(filename);
    const script = file === null ? null : cachedScript(HEAD + content + TAIL, filename, file);
    if (script === null) return compile.call(this, content, filename, format);
    const wrapper = script.runInThisContext({ displayErrors: true });
    return wrapper.call(this.exports, this.exports, requireFor(this), this, filename, path.dirname(filename));
  };
  if (produce)
    process.on("exit", () => {
      fs.mkdirSync(CACHE_DIR, { recursive: true });
      // After the command ran: the cache then holds every function it compiled, not only the top level.
      for (const [file, script] of produced) fs.writeFileSync(file, script.createCachedData());
    });
};

/**
 * `source` compiled as `filename` with the cache in `file` (lineOffset -1 for a file given the
 * one-line HEAD, so that V8 reports the file's own lines); null when there is no cache for it
 * (outside produce mode: then Node compiles the file itself, as it would without any of this).
 */
function cachedScript(source, filename, file, lineOffset = -1) {
  let cachedData;
  try {
    cachedData = fs.readFileSync(file);
  } catch {
    // No cache for this file: compiled from source (and, when producing, cached from now on).
    if (!produce) return null;
  }
  const script = new vm.Script(source, { filename, lineOffset, cachedData });
  if (produce) produced.set(file, script);
  return script;
}

/** The `require` a file of dist/ gets: Node's, but for a sibling chunk of the bundle. */
function requireFor(module) {
  const dir = path.dirname(module.filename);
  const inBundle = dir === BUNDLE;
  const require = (id) =>
    inBundle && SIBLING.test(id) ? loadSibling(module, dir + id.slice(1)) : module.require(id);
  require.resolve = (request, options) => Module._resolveFilename(request, module, false, options);
  require.cache = Module._cache;
  require.main = process.mainModule;
  return require;
}

/**
 * Whether a pack holds this chunk of the bundle, loading the pack written for it if there is one
 * (scripts/bundle-packs.mjs): one script, one cache, for all the chunks it requires at load.
 */
function inPack(filename) {
  if (packed.has(filename)) return true;
  if (path.dirname(filename) !== BUNDLE || packsSought.has(filename)) return false;
  packsSought.add(filename);
  const packFile = path.join(PACKS, path.basename(filename));
  let source;
  try {
    source = fs.readFileSync(packFile, "utf8");
  } catch {
    return false;
  }
  // A pack is [name, wrapper, name, wrapper, …] (its first line is "["; lines as the file has them).
  const script =
    cachedScript(source, packFile, cacheFileOf(packFile), 0) ?? new vm.Script(source, { filename: packFile });
  const entries = script.runInThisContext({ displayErrors: true });
  for (let i = 0; i < entries.length; i += 2) {
    const chunk = path.join(BUNDLE, entries[i]);
    // A chunk already running (from another pack or its own file) keeps the code it runs; the one
    // asked for is in Module._cache already, about to run.
    if (!packed.has(chunk) && (chunk === filename || Module._cache[chunk] === undefined))
      packed.set(chunk, entries[i + 1]);
  }
  return packed.has(filename);
}

/** A chunk's top level, run from its pack with the module object Node (or loadSibling) made. */
function runFromPack(module, filename) {
  const wrapper = packed.get(filename);
  packed.delete(filename);
  return wrapper.call(module.exports, module.exports, requireFor(module), module, filename, BUNDLE);
}

/**
 * A chunk of the bundle requiring another (`require("./chunk-X.js")`), loaded without Node's
 * resolution: the file's name is known, so the stat, realpath and package.json lookups Node makes
 * for every require (~0.1 ms each, ~45 chunks a command) are skipped; a chunk a pack holds is not
 * even read. Otherwise what Module._load does for a CommonJS file: one module object per file in
 * Module._cache (a cycle gets the partly filled exports), removed again when its top level throws.
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
    if (inPack(filename)) runFromPack(m, filename);
    else m._compile(fs.readFileSync(filename, "utf8"), filename, "commonjs");
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
