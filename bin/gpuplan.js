#!/usr/bin/env node
// CommonJS (bin/package.json). `gpuplan detect` with well-formed flags starts its probe child
// before anything else loads (src/detect/prestart.ts), then runs without the rest of the CLI
// (src/cli/detect-cli.ts); every other command line loads the full CLI.
const detect =
  process.argv[2] === "detect" &&
  require("../dist/detect/prestart.cjs").prestartProbes(process.argv.slice(2));
if (detect) require("../dist/detect/detect-cli.cjs").runDetect(detect);
else import("../dist/bundle/main.js");
