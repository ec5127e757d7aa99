// The build's V8 code cache for dist/ (bin/code-cache.js, docs/decisions/0014-build-time-code-cache.md):
// on a Node without a module compile cache, gpuplan compiles its files from the cache the build
// wrote, and a cache V8 refuses (damaged, another source) costs nothing but the cache.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { gpuplan, ROOT, tempDir } from "../helpers/cli.js";

const nodeHasCompileCache =
  typeof (Module as { enableCompileCache?: unknown }).enableCompileCache === "function";
const CACHE = join(ROOT, "dist/code-cache", `${process.version}-${process.arch}`);
const COMPILE = ["compile", join(ROOT, "examples/cell-painting.yaml"), "--target", "dgx-h100"];

let t: ReturnType<typeof tempDir>;
beforeEach(() => {
  t = tempDir();
});
afterEach(() => t.cleanup());

/** A preload that logs each script vm compiles from a cache: file, then whether V8 refused it. */
function recordCachedScripts(): { nodeArgs: string[]; compiled: () => Map<string, boolean> } {
  const log = join(t.dir, "scripts.log");
  const preload = join(t.dir, "record-scripts.cjs");
  writeFileSync(
    preload,
    `const vm = require("node:vm"); const { appendFileSync } = require("node:fs");
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    if (options && options.cachedData) appendFileSync(${JSON.stringify(log)}, options.filename + " " + this.cachedDataRejected + "\\n");
  }
};\n`,
  );
  return {
    nodeArgs: ["--require", preload],
    compiled: () => {
      const lines = existsSync(log) ? readFileSync(log, "utf8").trim().split("\n") : [];
      return new Map(lines.map((l) => [l.slice(0, l.lastIndexOf(" ")), l.endsWith(" true")]));
    },
  };
}

describe.skipIf(nodeHasCompileCache)("the build's code cache (Node without a compile cache)", () => {
  it("is written for this Node, and a compile runs its CLI files from it, none refused", () => {
    expect(existsSync(join(CACHE, "bundle__main.js"))).toBe(true);
    const { nodeArgs, compiled } = recordCachedScripts();
    const plain = gpuplan(COMPILE);
    const r = gpuplan(COMPILE, { nodeArgs });
    expect(r).toEqual(plain);
    expect(r.exitCode).toBe(0);
    const scripts = compiled();
    expect(scripts.get(join(ROOT, "dist/bundle/main.js"))).toBe(false);
    // The command's own modules, not only the entry: the pipeline validator, the YAML parser, commander.
    expect(scripts.size).toBeGreaterThan(20);
    expect([...scripts.values()].every((refused) => !refused)).toBe(true);
  });

  it("every file of dist/bundle a compile, a dry run and a run load comes from the cache, koffi as its prebuilt module", () => {
    // A chunk holding an import() is compiled from source and its own require()s go through
    // Node's resolution (scripts/bundle.mjs refuses to build one, but for the live view's opener);
    // the run and compile commands each had one (issue #17). The preload also lists, at exit,
    // every file Node's module cache holds.
    const { nodeArgs, compiled } = recordCachedScripts();
    const loadedLog = join(t.dir, "loaded.log");
    const listLoaded = join(t.dir, "list-loaded.cjs");
    writeFileSync(
      listLoaded,
      `process.on("exit", () => require("node:fs").writeFileSync(${JSON.stringify(loadedLog)}, Object.keys(require("node:module")._cache).join("\\n")));\n`,
    );
    const plan = join(t.dir, "hello.plan.json");
    expect(
      gpuplan(["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only", "-o", plan]),
    ).toMatchObject({
      exitCode: 0,
    });
    for (const args of [COMPILE, ["run", plan, "--dry-run"], ["run", plan, "--ui", "plain"]]) {
      const r = gpuplan(args, { nodeArgs: [...nodeArgs, "--require", listLoaded] });
      expect(r.exitCode, r.stderr).toBe(0);
      const loaded = readFileSync(loadedLog, "utf8").split("\n");
      const bundle = loaded.filter((f) => f.startsWith(join(ROOT, "dist/bundle/")));
      expect(bundle.length, args.join(" ")).toBeGreaterThan(10);
      const scripts = compiled();
      expect(
        bundle.filter((f) => scripts.get(f) !== false),
        `${args.join(" ")}: chunks not run from the code cache`,
      ).toEqual([]);
      if (args.includes("plain")) {
        // The run's C library (posix_spawn, the slot lock) loads koffi's native module directly,
        // not through koffi's loader or Node's ES module loader (src/libc/libc.ts).
        const koffi = loaded.filter((f) => /koffi/.test(f));
        expect(koffi).toHaveLength(1);
        expect(koffi[0]).toMatch(/koffi\.node$/);
      }
    }
  });

  it("a damaged cache is refused and the file compiled from source: same output, same exit", () => {
    // A copy of the package, its cache for main.js overwritten with bytes V8 cannot use.
    const copy = join(t.dir, "pkg");
    for (const path of ["bin", "dist", "package.json"])
      cpSync(join(ROOT, path), join(copy, path), { recursive: true });
    symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
    const cacheCopy = join(copy, "dist/code-cache", `${process.version}-${process.arch}`);
    writeFileSync(join(cacheCopy, "bundle__main.js"), Buffer.alloc(4096, 7));
    expect(readdirSync(cacheCopy).length).toBeGreaterThan(20);
    const { nodeArgs, compiled } = recordCachedScripts();
    const plain = gpuplan(COMPILE);
    const r = spawnSync(process.execPath, [...nodeArgs, join(copy, "bin/gpuplan.js"), ...COMPILE], {
      cwd: ROOT,
      env: { ...process.env, NO_COLOR: "1" },
      encoding: "utf8",
    });
    expect({ exitCode: r.status, stdout: r.stdout, stderr: r.stderr }).toEqual(plain);
    const scripts = compiled();
    expect(scripts.get(join(copy, "dist/bundle/main.js"))).toBe(true);
  });
});
