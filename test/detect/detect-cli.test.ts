// `gpuplan detect` with well-formed flags runs without the rest of the CLI (src/cli/detect-cli.ts:
// no commander, no other command): these tests hold that path to exactly what the full CLI
// (dist/bundle/main.js) prints and returns for the same command line.
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { type CliResult, gpuplan, loadedModules, ROOT } from "../helpers/cli.js";
import { fakeEnv, fakeLib, fakeLibsBuilt } from "./fake-libs.js";

/** The full CLI, as if bin/gpuplan.js had not taken the short path. */
function fullCli(args: string[], env: NodeJS.ProcessEnv): CliResult {
  const r = spawnSync(process.execPath, [join(ROOT, "dist/bundle/main.js"), ...args], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1", ...env },
    encoding: "utf8",
    timeout: 30_000,
  });
  return { exitCode: r.status ?? -1, stdout: r.stdout, stderr: r.stderr };
}

/** Durations (shown only when not 0), free memory and the like differ from run to run: compare the rest. */
const steady = (text: string) =>
  text
    .replace(/ \(\d+(\.\d+)? ?m?s\)/g, "")
    .replace(/"durationMs": [\d.]+/g, '"durationMs": #')
    .replace(/\d+(\.\d+)?/g, "#");

describe("gpuplan detect's short path", () => {
  const dir = mkdtempSync(join(tmpdir(), "gpuplan-detect-cli-"));
  const cases: string[][] = [
    ["detect"],
    ["detect", "--json"],
    ["detect", "--all", "--json", "--timeout", "2s"],
    ["detect", "--timeout=5s", "--json", "--json"],
    ["detect", "--timeout", "banana"],
    ["detect", "--timeout", "0"],
    ["detect", "--timeout", "25d", "--json"],
    ["detect", "--save", "/nonexistent-dir/inv.json"],
    ["detect", "--bogus"],
    ["detect", "--save"],
  ];
  for (const args of cases) {
    it(`${args.join(" ")}: the same exit code and output as the full CLI`, () => {
      const env = fakeEnv("h100x8-mig.scenario", {});
      const short = gpuplan(args, { env });
      const full = fullCli(args, env);
      expect(short.exitCode).toBe(full.exitCode);
      expect(steady(short.stdout)).toBe(steady(full.stdout));
      expect(steady(short.stderr)).toBe(steady(full.stderr));
    });
  }

  it.skipIf(!fakeLibsBuilt)("--save writes the same inventory both ways, GPUs included", () => {
    const env = fakeEnv("h100x8-mig.scenario", { nvml: fakeLib("nvml") });
    const a = join(dir, "short.json");
    const b = join(dir, "full.json");
    expect(gpuplan(["detect", "--save", a, "--json"], { env }).exitCode).toBe(0);
    expect(fullCli(["detect", "--save", b, "--json"], env).exitCode).toBe(0);
    const [short, full] = [a, b].map((f) => JSON.parse(readFileSync(f, "utf8")));
    expect(short.gpus).toEqual(full.gpus);
    expect(short.gpus).toHaveLength(13);
  });

  it("loads neither commander nor another command; a command line it does not know gets the full CLI", () => {
    const saved = { ...process.env };
    Object.assign(process.env, fakeEnv("h100x8-mig.scenario", {}));
    try {
      const lean = loadedModules(
        ["detect", "--json"],
        "commander|bundle/main\\.js|bundle/compile-|bundle/run-",
      );
      expect(lean.result.exitCode).toBe(0);
      expect(lean.modules).toEqual([]);
      const full = loadedModules(["detect", "--bogus"], "bundle/main\\.js");
      expect(full.result.exitCode).toBe(2);
      expect(full.modules.length).toBeGreaterThan(0);
    } finally {
      for (const k of Object.keys(process.env)) if (!(k in saved)) delete process.env[k];
      Object.assign(process.env, saved);
    }
  });
});
