// The build's V8 code cache for dist/ (bin/code-cache.js, docs/decisions/0014-build-time-code-cache.md):
// on a Node without a module compile cache, gpuplan compiles its files from the cache the build
// wrote, and a cache V8 refuses (damaged, another source) costs nothing but the cache.
import { spawnSync } from "node:child_process";
import { cpSync, existsSync, readdirSync, readFileSync, rmSync, symlinkSync, writeFileSync } from "node:fs";
import Module from "node:module";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { fakeEnv, fakeLib, fakeLibsBuilt } from "../detect/fake-libs.js";
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

/**
 * A preload that logs each script vm compiles from a cache (file, then whether V8 refused it) and
 * each chunk of dist/bundle read from its own file.
 */
function recordCachedScripts(): {
  nodeArgs: string[];
  compiled: () => Map<string, boolean>;
  readChunks: () => Set<string>;
} {
  const log = join(t.dir, "scripts.log");
  const reads = join(t.dir, "reads.log");
  const preload = join(t.dir, "record-scripts.cjs");
  writeFileSync(
    preload,
    `const vm = require("node:vm"); const fs = require("node:fs"); const { appendFileSync } = fs;
const Script = vm.Script;
vm.Script = class extends Script {
  constructor(code, options) {
    super(code, options);
    if (options && options.cachedData) appendFileSync(${JSON.stringify(log)}, options.filename + " " + this.cachedDataRejected + "\\n");
  }
};
const readFileSync = fs.readFileSync;
fs.readFileSync = function (file, ...rest) {
  if (typeof file === "string" && /[\\/]dist[\\/]bundle[\\/][^\\/]+\\.js$/.test(file)) appendFileSync(${JSON.stringify(reads)}, file + "\\n");
  return readFileSync.call(this, file, ...rest);
};\n`,
  );
  const lines = (file: string) => (existsSync(file) ? readFileSync(file, "utf8").trim().split("\n") : []);
  return {
    nodeArgs: ["--require", preload],
    compiled: () => new Map(lines(log).map((l) => [l.slice(0, l.lastIndexOf(" ")), l.endsWith(" true")])),
    readChunks: () => new Set(lines(reads)),
  };
}

/** The chunks each pack a run compiled from its cache holds (scripts/bundle-packs.mjs), V8 refusing none. */
function chunksFromPacks(scripts: Map<string, boolean>, bundle = join(ROOT, "dist/bundle")): Set<string> {
  const chunks = new Set<string>();
  for (const [file, refused] of scripts)
    if (!refused && file.startsWith(join(bundle, "packs/")))
      for (const m of readFileSync(file, "utf8").matchAll(/^"([^"]+)",function \(exports/gm))
        chunks.add(join(bundle, m[1]!));
  return chunks;
}

describe.skipIf(nodeHasCompileCache)("the build's code cache (Node without a compile cache)", () => {
  it("is written for this Node, and a compile runs its CLI files from it, none refused", () => {
    expect(existsSync(join(CACHE, "bundle__packs__main.js"))).toBe(true);
    const { nodeArgs, compiled } = recordCachedScripts();
    const plain = gpuplan(COMPILE);
    const r = gpuplan(COMPILE, { nodeArgs });
    expect(r).toEqual(plain);
    expect(r.exitCode).toBe(0);
    const scripts = compiled();
    expect(scripts.get(join(ROOT, "dist/bundle/packs/main.js"))).toBe(false);
    expect([...scripts.values()].every((refused) => !refused)).toBe(true);
    // The command's own modules, not only the entry: the pipeline validator, the YAML parser, commander.
    expect(chunksFromPacks(scripts).size).toBeGreaterThan(20);
  });

  it("every file of dist/bundle a compile, a dry run, a run and a GPU run load comes from the cache, koffi as its prebuilt module", () => {
    // A chunk holding an import() is compiled from source and its own require()s go through
    // Node's resolution (scripts/bundle.mjs refuses to build one, but for the live view's opener);
    // the run and compile commands each had one (issue #17). The preload also lists, at exit,
    // every file Node's module cache holds.
    const { nodeArgs, compiled, readChunks } = recordCachedScripts();
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
    const cases: { args: string[]; env?: NodeJS.ProcessEnv }[] = [
      { args: COMPILE },
      { args: ["run", plan, "--dry-run"] },
      { args: ["run", plan, "--ui", "plain"] },
    ];
    if (fakeLibsBuilt) {
      // A GPU run on one fake H100: detection and the check, the slot lock, the memory sampler
      // (the build trains them where it has a C compiler, as CI has: scripts/train-code-cache.mjs).
      const env = fakeEnv(
        "h100x8-mig.scenario",
        { nvml: fakeLib("nvml") },
        {
          GPUPLAN_LOCK_DIR: join(t.dir, "locks"),
        },
      );
      writeFileSync(
        join(t.dir, "gpu.yaml"),
        'version: 1\nname: g\npipelines:\n  - name: g\n    steps:\n      - { id: s, run: ["true"], memory: torch, vram: 1GiB }\n',
      );
      const gpuPlan = join(t.dir, "gpu.json");
      const compiled = gpuplan(["compile", join(t.dir, "gpu.yaml"), "-o", gpuPlan], { env });
      expect(compiled.exitCode, compiled.stderr).toBe(0);
      cases.push({ args: ["run", gpuPlan, "--ui", "plain"], env });
    }
    for (const { args, env } of cases) {
      const r = gpuplan(args, {
        nodeArgs: [...nodeArgs, "--require", listLoaded],
        cwd: t.dir,
        ...(env && { env }),
      });
      expect(r.exitCode, r.stderr).toBe(0);
      const loaded = readFileSync(loadedLog, "utf8").split("\n");
      const bundle = loaded.filter((f) => f.startsWith(join(ROOT, "dist/bundle/")));
      expect(bundle.length, args.join(" ")).toBeGreaterThan(10);
      // Each chunk ran from a pack compiled from its cache, or was read from its own file and
      // compiled from its own cache; main.js, which Node reads before gpuplan sees it, from its pack.
      const scripts = compiled();
      const packed = chunksFromPacks(scripts);
      const read = readChunks();
      const main = join(ROOT, "dist/bundle/main.js");
      expect(
        bundle.filter((f) => (f !== main && read.has(f) ? scripts.get(f) !== false : !packed.has(f))),
        `${args.join(" ")}: chunks not run from the code cache`,
      ).toEqual([]);
      // Most of them from packs: a command's chunks are not read one by one.
      expect(packed.size, args.join(" ")).toBeGreaterThan(read.size);
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
    // A copy of the package, the cache of main.js's pack overwritten with bytes V8 cannot use.
    const copy = copyPackage();
    const cacheCopy = join(copy, "dist/code-cache", `${process.version}-${process.arch}`);
    writeFileSync(join(cacheCopy, "bundle__packs__main.js"), Buffer.alloc(4096, 7));
    expect(readdirSync(cacheCopy).length).toBeGreaterThan(10);
    const { nodeArgs, compiled } = recordCachedScripts();
    const plain = gpuplan(COMPILE);
    expect(runCopy(copy, nodeArgs)).toEqual(plain);
    const scripts = compiled();
    expect(scripts.get(join(copy, "dist/bundle/packs/main.js"))).toBe(true);
    // The command's own pack (whichever of the packs named compile-… it is) still from its cache.
    const packs = join(copy, "dist/bundle/packs/");
    const commandPacks = [...scripts].filter(([f]) => f.startsWith(`${packs}compile-`));
    expect(commandPacks.length).toBeGreaterThan(0);
    expect(commandPacks.every(([, refused]) => refused === false)).toBe(true);
  });

  it("without its packs the bundle runs chunk by chunk from their own files: same output, same exit", () => {
    const copy = copyPackage();
    rmSync(join(copy, "dist/bundle/packs"), { recursive: true });
    const { nodeArgs, readChunks } = recordCachedScripts();
    expect(runCopy(copy, nodeArgs)).toEqual(gpuplan(COMPILE));
    expect(readChunks().size).toBeGreaterThan(20);
  });
});

/** A copy of the package (bin, dist, package.json; node_modules linked) to damage. */
function copyPackage(): string {
  const copy = join(t.dir, "pkg");
  for (const path of ["bin", "dist", "package.json"])
    cpSync(join(ROOT, path), join(copy, path), { recursive: true });
  symlinkSync(join(ROOT, "node_modules"), join(copy, "node_modules"));
  return copy;
}

function runCopy(copy: string, nodeArgs: string[]) {
  const r = spawnSync(process.execPath, [...nodeArgs, join(copy, "bin/gpuplan.js"), ...COMPILE], {
    cwd: ROOT,
    env: { ...process.env, NO_COLOR: "1" },
    encoding: "utf8",
  });
  return { exitCode: r.status, stdout: r.stdout, stderr: r.stderr };
}
