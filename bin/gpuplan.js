#!/usr/bin/env node
// `gpuplan detect` waits on its probe child: start it before the CLI loads (src/detect/prestart.ts).
if (process.argv[2] === "detect")
  (await import("../dist/detect/prestart.mjs")).prestartProbes(process.argv.slice(2));
await import("../dist/bundle/main.js");
