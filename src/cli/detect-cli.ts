/**
 * `gpuplan detect` with well-formed flags, without commander, any other command or the ESM
 * loader: bin/gpuplan.js requires this (as the CommonJS bundle dist/detect/detect-cli.cjs) with
 * the flags src/detect/prestart.ts parsed when it started the probe child. Detect's start-up is
 * on the clock (two Node starts, its own and the probe child's), and on Node 20 the ESM loader
 * and the full CLI cost it about a third. Any other command line goes to the full CLI, and
 * test/detect/detect-cli.test.ts holds both paths to the same output. What program.ts resolves
 * with commander is resolved here the same way: --lock-dir, else GPUPLAN_LOCK_DIR (an empty one
 * is unset), else the default.
 */
import type { DetectArgs } from "../detect/prestart.js";
import { defaultLockDir } from "../run/lock/default-lock-dir.js";
import { runCommand } from "./run-command.js";

export function runDetect(args: DetectArgs): Promise<void> {
  const fromEnv = process.env.GPUPLAN_LOCK_DIR;
  const lockDir = args.lockDir ?? (fromEnv ? fromEnv : defaultLockDir());
  // Under --json a failure is a gpuplan/error@1 document on stdout, as main.ts decides for the full CLI.
  return runCommand(args.json ? "error-json" : "human", () => import("./commands/detect.js"), {
    ...args,
    lockDir,
  });
}
