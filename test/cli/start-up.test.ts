// What bin/gpuplan.js does before the CLI loads (docs/decisions/0008-start-up.md): `--version`
// is answered from package.json without loading any of dist/, and Node's module compile cache is
// turned on where Node offers it (22.1+); where it does not (Node 20), the build's code cache is
// used instead (test/cli/code-cache.test.ts).
import { spawnSync } from "node:child_process";
import { closeSync, existsSync, openSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { VERSION } from "../../src/version.js";
import { gpuplan, loadedModules, ROOT, tempDir } from "../helpers/cli.js";

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

describe("start-up", () => {
  it("-v, -V and --version print the version without loading the CLI", () => {
    for (const flag of ["-v", "-V", "--version"]) {
      const { result, modules } = loadedModules([flag], "/dist/|commander");
      expect(result).toMatchObject({ exitCode: 0, stdout: `${VERSION}\n`, stderr: "" });
      expect(modules).toEqual([]);
    }
    // Anything more on the command line is the full CLI's to judge.
    const more = loadedModules(["--version", "--nope"], "/dist/bundle/main.js");
    expect(more.modules).not.toEqual([]);
  });

  it("a version that cannot be written is exit 2 with its code, as any other output", () => {
    if (!existsSync("/dev/full")) return;
    const full = openSync("/dev/full", "w");
    try {
      const r = spawnSync(process.execPath, [join(ROOT, "bin/gpuplan.js"), "--version"], {
        stdio: ["ignore", full, "pipe"],
        encoding: "utf8",
      });
      expect(r.status).toBe(2);
      expect(r.stderr).toBe(
        "gpuplan: error: cannot write to stdout: ENOSPC  [file-system-error]\n  hint: the disk or quota holding stdout is full: free some space (df -h), or send the output elsewhere\n",
      );
    } finally {
      closeSync(full);
    }
  });

  it("a dry run compiles none of node:crypto's built-ins (~3.5 ms of its start): its run id comes from /dev/urandom", () => {
    const plan = join(t.dir, "hello.plan.json");
    expect(gpuplan(["compile", join(ROOT, "examples/hello-cpu.yaml"), "-o", plan])).toMatchObject({
      exitCode: 0,
    });
    const { result, modules } = loadedModules(["run", plan, "--dry-run"], "^(node:)?crypto$");
    expect(result.exitCode, result.stderr).toBe(0);
    expect(modules).toEqual([]);
  });

  it("neither a dry run nor a compile of a small file loads node:crypto, Node's streams or fs/promises, when stdout and stderr are pipes", () => {
    // Their texts go out with write(2) (src/cli/output-guard.ts), their colour is decided without
    // process.stderr where it cannot be a terminal (src/cli/paint.ts), and crypto is loaded only
    // to hash a text over 4 KB (src/text/sha256.ts; crypto brings node:stream).
    // Node's own list of the built-ins it compiled, written at exit by a preload that loads none.
    const plan = join(t.dir, "hello.plan.json");
    expect(gpuplan(["compile", join(ROOT, "examples/hello-cpu.yaml"), "-o", plan])).toMatchObject({
      exitCode: 0,
    });
    const list = join(t.dir, "builtins.txt");
    const preload = join(t.dir, "list-builtins.cjs");
    writeFileSync(
      preload,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(list)}, process.moduleLoadList.join("\\n")));\n`,
    );
    const heavy = (args: string[]) => {
      const result = gpuplan(args, { nodeArgs: ["--require", preload] });
      const loaded = readFileSync(list, "utf8").split("\n");
      return {
        result,
        heavy: loaded.filter((m) => /^NativeModule (crypto|stream|net|tty|fs\/promises)$/.test(m)),
      };
    };
    const compile = heavy(["compile", join(ROOT, "examples/cell-painting.yaml"), "--target", "dgx-h100"]);
    expect(compile.result.exitCode, compile.result.stderr).toBe(0);
    expect(JSON.parse(compile.result.stdout)).toMatchObject({ schema: "gpuplan/plan@2" });
    expect(compile.result.stderr).toMatch(/^gpuplan compile: 8 pipelines/);
    expect(compile.heavy).toEqual([]);
    const dry = heavy(["run", plan, "--dry-run"]);
    expect(dry.result.exitCode, dry.result.stderr).toBe(0);
    expect(dry.result.stdout).toMatch(/hello/);
    expect(dry.heavy).toEqual([]);
    // The list does show them where they are used: a real run writes through its view's streams.
    const real = heavy(["run", plan, "--ui", "plain"]);
    expect(real.result.exitCode, real.result.stderr).toBe(0);
    expect(real.heavy).toContain("NativeModule stream");
  });

  it("turns on Node's compile cache when Node offers one", () => {
    const marker = join(t.dir, "cache-on");
    const preload = join(t.dir, "offer-cache.cjs");
    writeFileSync(
      preload,
      `require("node:module").enableCompileCache = () => require("node:fs").writeFileSync(${JSON.stringify(marker)}, "");\n`,
    );
    const r = gpuplan(["compile", "--help"], { nodeArgs: ["--require", preload] });
    expect(r).toMatchObject({ exitCode: 0 });
    expect(existsSync(marker)).toBe(true);
    // --version loads nothing, not even a cache.
    rmSync(marker);
    expect(gpuplan(["--version"], { nodeArgs: ["--require", preload] })).toMatchObject({ exitCode: 0 });
    expect(existsSync(marker)).toBe(false);
  });
});
