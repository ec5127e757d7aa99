// Ctrl-C while compile writes a big plan (-o): the temporary file beside the plan is removed and
// the process stops as SIGINT stops it. An attack found `.plan.json.PID.HEX.tmp` files of 11–30 MB
// left behind after each interrupted write.
import { spawn } from "node:child_process";
import { existsSync, readdirSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT, tempDir, writeBigPipeline } from "../helpers/cli.js";

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

describe("compile -o, interrupted", () => {
  it("leaves no temporary file and no half-written plan", async () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    const file = writeBigPipeline(t.dir, 8000, "-".repeat(200));
    writeFileSync(join(t.dir, "plan.json"), "the plan from before\n");
    const child = spawn(
      process.execPath,
      [join(ROOT, "bin/gpuplan.js"), "compile", file, "--target", "cpu-only", "-o", "plan.json"],
      { cwd: t.dir, stdio: "ignore" },
    );
    const tmp = () => readdirSync(t.dir).filter((f) => f.endsWith(".tmp"));
    // Interrupt once the temporary file is there (the write is under way).
    const seen = await new Promise<boolean>((resolve) => {
      const timer = setInterval(() => {
        if (tmp().length > 0) {
          clearInterval(timer);
          child.kill("SIGINT");
          resolve(true);
        }
      }, 2);
      child.once("exit", () => {
        clearInterval(timer);
        resolve(false);
      });
    });
    const [code, signal] = await new Promise<[number | null, string | null]>((resolve) => {
      if (child.exitCode !== null || child.signalCode !== null) resolve([child.exitCode, child.signalCode]);
      else child.once("exit", (c, s) => resolve([c, s]));
    });
    expect(seen, "the write ended before it could be interrupted: give it more to write").toBe(true);
    expect(tmp()).toEqual([]);
    // Stopped by the signal (or, had the rename won the race, done): never a torn plan.
    if (signal === "SIGINT") {
      const { readFileSync } = await import("node:fs");
      expect(readFileSync(join(t.dir, "plan.json"), "utf8")).toBe("the plan from before\n");
    } else expect(code).toBe(0);
    expect(existsSync(join(t.dir, "plan.json"))).toBe(true);
  }, 60_000);
});
