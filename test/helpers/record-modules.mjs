// Preload (`node --import`) that records every module whose specifier or URL matches
// GPUPLAN_TEST_MODULE_PATTERN into the file GPUPLAN_TEST_MODULE_LOG, one per line. It watches
// both ways a module can arrive: ESM resolution (a `node:module` resolve hook) and CommonJS
// `require` (including createRequire), so a lazily required native module cannot slip past, and
// at exit every CommonJS file in Module._cache, however it was loaded.
import { appendFileSync } from "node:fs";
import Module, { register } from "node:module";
import { isAbsolute } from "node:path";
import { pathToFileURL } from "node:url";

const log = process.env.GPUPLAN_TEST_MODULE_LOG;
const pattern = process.env.GPUPLAN_TEST_MODULE_PATTERN;
if (log && pattern) {
  const re = new RegExp(pattern);
  const hook = `
    import { appendFileSync } from "node:fs";
    let re, log;
    export function initialize(data) { re = new RegExp(data.pattern); log = data.log; }
    export async function resolve(specifier, context, next) {
      const result = await next(specifier, context);
      if (re.test(specifier) || re.test(result.url)) appendFileSync(log, "esm " + result.url + "\\n");
      return result;
    }
  `;
  register(`data:text/javascript,${encodeURIComponent(hook)}`, { data: { pattern, log } });
  const load = Module._load;
  Module._load = function (request, parent, ...rest) {
    // A file is logged by its URL, as the ESM hook logs it (the CLI's bundle is CommonJS).
    let file;
    try {
      file = Module._resolveFilename(request, parent);
    } catch {}
    const url = file && isAbsolute(file) ? pathToFileURL(file).href : undefined;
    if (re.test(request) || (url && re.test(url))) {
      if (url) seen.add(url);
      appendFileSync(log, `cjs ${url ?? request}\n`);
    }
    return load.call(this, request, parent, ...rest);
  };
  // bin/code-cache.js loads the bundle's chunks from one another without Module._load: every
  // CommonJS file still ends up in Module._cache, so what is there at exit is logged too.
  const seen = new Set();
  process.on("exit", () => {
    for (const file of Object.keys(Module._cache)) {
      const url = isAbsolute(file) ? pathToFileURL(file).href : file;
      if (!seen.has(url) && re.test(url)) appendFileSync(log, `cjs ${url}\n`);
    }
  });
}
