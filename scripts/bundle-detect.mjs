#!/usr/bin/env node
// Bundles the two detect entries that run outside the CLI bundle, each into one file, because
// `gpuplan detect` waits for both to start and Node 20 loads one file much sooner than the
// module graph tsc emits (resolving, reading and linking each module):
// - dist/detect/probe-child.cjs, the vendor probe child: CommonJS, no ESM loader at all
//   (~20 ms sooner to its first vendor call); koffi stays external (native, from node_modules);
// - dist/detect/prestart.cjs, which bin/gpuplan.js requires to start that child before anything
//   else loads (src/detect/prestart.ts): small, so the spawn comes first;
// - dist/detect/detect-cli.cjs, the detect command without the rest of the CLI
//   (src/cli/detect-cli.ts), which bin/gpuplan.js requires next;
// - dist/detect/run-prestart.cjs, which bin/gpuplan.js requires for `gpuplan run`: the same
//   pre-start for a run's check of its plan against the machine (src/detect/run-prestart.ts),
//   which loads prestart.cjs beside it only when it starts children.
// Both are CommonJS: on Node 20 the ESM loader alone (its own modules, asynchronous file reads,
// resolution, linking) costs more than everything detect itself does in gpuplan's process.
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
    // Its stack traces are never shown (a failure is reported by its message), so names can go:
    // less to parse at every start.
    minifyIdentifiers: true,
  });
  for (const [entry, out] of [
    ["dist/detect/prestart.js", "dist/detect/prestart.cjs"],
    ["dist/cli/detect-cli.js", "dist/detect/detect-cli.cjs"],
  ]) {
    await build({
      ...common,
      entryPoints: [join(root, entry)],
      outfile: join(root, out),
      format: "cjs",
      // Loaded only when needed, from where they are, rather than parsed at every detect: chalk
      // when there is colour to paint, the slot lock when a GPU has processes (slot-holders.ts).
      external: ["koffi", "chalk", "../run/lock/index.js"],
      // spawn-child.ts finds the child's file from import.meta.url, which CommonJS lacks.
      define: { "import.meta.url": "__gpuplanModuleUrl" },
      banner: { js: 'const __gpuplanModuleUrl = require("node:url").pathToFileURL(__filename).href;' },
    });
  }
  // No import.meta.url here, so no banner for it: a CPU plan's `run` loads this file for nothing.
  await build({
    ...common,
    entryPoints: [join(root, "dist/detect/run-prestart.js")],
    outfile: join(root, "dist/detect/run-prestart.cjs"),
    format: "cjs",
  });
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await bundleDetectEntries();
