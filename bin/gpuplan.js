#!/usr/bin/env node
// CommonJS (bin/package.json). What runs before anything else loads, each for a measured reason
// (docs/decisions/0007-start-up.md, 0014-build-time-code-cache.md): `gpuplan --version` answered
// from package.json; Node's module compile cache where Node has it (22.1+), else the V8 code cache
// the build wrote for dist/ (./code-cache.js); `gpuplan detect` with well-formed flags starts its
// probe child (src/detect/prestart.ts), then runs without the rest of the CLI
// (src/cli/detect-cli.ts); `gpuplan run` of a plan with GPUs starts the probe child its check
// against the machine waits for (src/detect/run-prestart.ts); every other command line loads
// the full CLI.
const args = process.argv.slice(2);
if (args.length === 1 && (args[0] === "--version" || args[0] === "-v" || args[0] === "-V")) {
  try {
    require("node:fs").writeSync(1, `${require("../package.json").version}\n`);
  } catch (e) {
    // A reader that went away (`gpuplan --version | true`) is no failure; a full disk is.
    if (e.code !== "EPIPE") {
      process.exitCode = 2;
      // The line and hint every stdout failure gets (src/problems/stdout-failure.ts), loaded only now.
      import("../dist/problems/stdout-failure.js").then(
        (m) => process.stderr.write(m.stdoutFailureText(e.code)),
        () =>
          process.stderr.write(`gpuplan: error: cannot write to stdout: ${e.code}  [file-system-error]\n`),
      );
    }
  }
} else {
  const { enableCompileCache } = require("node:module");
  if (enableCompileCache) enableCompileCache();
  else require("./code-cache.js")();
  const detect = args[0] === "detect" && require("../dist/detect/prestart.cjs").prestartProbes(args);
  if (args[0] === "run")
    require("../dist/detect/run-prestart.cjs").prestartRunProbes(args, (env) =>
      require("../dist/detect/prestart.cjs").prestartVerificationProbes(env, {
        serveSampler: true,
        cudaOnlyIfNeeded: true,
      }),
    );
  if (detect) require("../dist/detect/detect-cli.cjs").runDetect(detect);
  else require("../dist/bundle/main.js");
}
