// Compiles the fake vendor libraries (fixtures/fake-libs/*.c) into fixtures/lib/build/ with the
// system C compiler, and makes sure the probe child and its pre-start hook are built (the
// one-file bundles in dist/detect/), since the child runs as plain node even when the tests
// run TypeScript.
import { execFileSync, spawnSync } from "node:child_process";
import { existsSync, mkdirSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { FAKE_LIB_DIR, FAKE_LIBS, FAKE_SRC_DIR } from "../detect/fake-libs.js";

function newest(dir: string): number {
  let t = 0;
  for (const entry of readdirSync(dir, { withFileTypes: true })) {
    const p = join(dir, entry.name);
    t = Math.max(t, entry.isDirectory() ? newest(p) : statSync(p).mtimeMs);
  }
  return t;
}

export default function setup(): void {
  const compiler = ["cc", "gcc", "clang"].find(
    (c) => spawnSync(c, ["--version"], { stdio: "ignore" }).status === 0,
  );
  if (!compiler) {
    console.warn(
      "gpuplan tests: no C compiler (cc/gcc/clang) found; the fake vendor library tests are skipped.",
    );
  } else {
    for (const lib of Object.values(FAKE_LIBS)) {
      const dir = join(FAKE_LIB_DIR, lib.dir);
      const out = join(dir, lib.file);
      const sources = [join(FAKE_SRC_DIR, lib.source), join(FAKE_SRC_DIR, "scenario.c")];
      // Exact names in `local` win over the `global` glob: only the hidden symbols go.
      const hide = "hide" in lib ? lib.hide : [];
      const map = join(dir, "exports.map");
      const script = hide.length
        ? `{ global: *; local: ${hide.map((s) => `${s}; `).join("")}};\n`
        : "{ global: *; };\n";
      const stale =
        !existsSync(out) ||
        !existsSync(map) ||
        readFileSync(map, "utf8") !== script ||
        Math.max(
          ...sources.map((s) => statSync(s).mtimeMs),
          statSync(join(FAKE_SRC_DIR, "scenario.h")).mtimeMs,
        ) > statSync(out).mtimeMs;
      if (!stale) continue;
      mkdirSync(dir, { recursive: true });
      writeFileSync(map, script);
      execFileSync(
        compiler,
        [
          "-shared",
          "-fPIC",
          "-O1",
          "-Wall",
          `-Wl,--version-script=${map}`,
          ...lib.flags,
          "-o",
          out,
          ...sources,
        ],
        { stdio: "inherit" },
      );
    }
  }
  const bundles = ["dist/detect/probe-child.cjs", "dist/detect/prestart.cjs"];
  if (bundles.some((b) => !existsSync(b) || newest("src/detect") > statSync(b).mtimeMs)) {
    // tsc exits non-zero on type errors elsewhere in the tree but still emits; the child is what we need.
    spawnSync(process.execPath, ["node_modules/typescript/bin/tsc", "-p", "tsconfig.json"], {
      stdio: "ignore",
    });
    spawnSync(process.execPath, ["scripts/bundle-detect.mjs"], { stdio: "inherit" });
  }
}
