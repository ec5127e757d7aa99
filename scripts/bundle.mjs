#!/usr/bin/env node
// Bundles the compiled CLI (dist/cli/main.js) into dist/bundle/ with one chunk per lazily
// imported command. Node 20 has no module compile cache, and resolving and reading ~100 small
// ESM files (yaml alone is ~60) costs more than running a small compile; one bundle roughly
// halves start-up. koffi stays external: it is native and only loaded by the detect child.
import { rmSync } from "node:fs";
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";
import { bundleDetectEntries } from "./bundle-detect.mjs";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const outdir = join(root, "dist/bundle");
rmSync(outdir, { recursive: true, force: true });
await build({
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
  // commander and ajv's runtime are CommonJS; give their require() a real one in ESM.
  banner: {
    js: "import { createRequire as __gpuplanCreateRequire } from 'node:module'; const require = __gpuplanCreateRequire(import.meta.url);",
  },
});
await bundleDetectEntries();
