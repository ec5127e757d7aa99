#!/usr/bin/env node
// Bundles the vendor probe child (dist/detect/child/main.js, compiled by tsc) into one CommonJS
// file, dist/detect/probe-child.cjs. gpuplan detect waits for this process, and Node 20 starts
// one CommonJS file ~20 ms sooner than the ESM module graph tsc emits (no ESM loader, no
// resolution). koffi stays external: it is native, resolved from node_modules at run time.
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import { build } from "esbuild";

const root = join(dirname(fileURLToPath(import.meta.url)), "..");

export async function bundleProbeChild() {
  await build({
    entryPoints: [join(root, "dist/detect/child/main.js")],
    outfile: join(root, "dist/detect/probe-child.cjs"),
    bundle: true,
    format: "cjs",
    platform: "node",
    target: "node20.19",
    external: ["koffi"],
    logLevel: "warning",
    legalComments: "none",
    minifyWhitespace: true,
    minifySyntax: true,
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleProbeChild();
