/** Processes a test left running, found in /proc by their command line. */
import { readdirSync, readFileSync } from "node:fs";
import { expect } from "vitest";

/** The pid of a process whose argv[1] is `script` (`sh SCRIPT …`: a shell script run by path), or null. */
export function scriptRunning(script: string): number | null {
  for (const pid of readdirSync("/proc").filter((name) => /^[0-9]+$/.test(name))) {
    try {
      if (readFileSync(`/proc/${pid}/cmdline`, "utf8").split("\0")[1] === script) return Number(pid);
    } catch {
      // Gone meanwhile.
    }
  }
  return null;
}

/** Until no process runs `script` (at most `ms`); fails the test if one still does. */
export function waitForScriptToEnd(script: string, ms = 5000): void {
  const until = Date.now() + ms;
  while (scriptRunning(script) !== null && Date.now() < until)
    Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
  expect(scriptRunning(script)).toBeNull();
}
