#!/usr/bin/env node
// Bundles the two detect entries that run outside the CLI bundle, each into one file, because
// `gpuplan detect` waits for both to start and Node 20 loads one file much sooner than the
// module graph tsc emits (resolving, reading and linking each module):
// - dist/detect/probe-child.cjs, the vendor probe child: CommonJS, no ESM loader at all
//   (~20 ms sooner to its first vendor call); koffi stays external (native, from node_modules);
// - dist/detect/prestart.mjs, which bin/gpuplan.js loads to start that child before the CLI
//   loads (src/detect/prestart.ts); ESM, for import.meta.url.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");
const common = {
  bundle: true,
  platform: "node",
  target: "node20.19",
  logLevel: "warning",
  legalComments: "none",
  minifyWhitespace: true,
  minifySyntax: true,
};

export async function bundleDetectEntries() {
  await build({
    ...common,
    entryPoints: [join(root, "dist/detect/child/main.js")],
    outfile: join(root, "dist/detect/probe-child.cjs"),
    format: "cjs",
    external: ["koffi"],
  });
  await build({
    ...common,
    entryPoints: [join(root, "dist/detect/prestart.js")],
    outfile: join(root, "dist/detect/prestart.mjs"),
    format: "esm",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleDetectEntries();
