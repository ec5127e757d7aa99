// The probe child loads koffi's prebuilt native module itself where npm put koffi beside gpuplan
// (src/libc/load-koffi.ts), skipping koffi's loader, and falls back to it elsewhere.
import { spawnSync } from "node:child_process";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "../helpers/cli.js";

/** Load koffi as the child at `entry` would, in a fresh process; report what got loaded. */
function loadAs(entry: string): { version: string; loaded: string[] } {
  const script = `
    import { createRequire } from "node:module";
    import { loadKoffi } from ${JSON.stringify(join(ROOT, "dist/libc/load-koffi.js"))};
    const koffi = loadKoffi(${JSON.stringify(entry)});
    const cache = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify({ version: koffi.version, load: typeof koffi.load, loaded: cache.filter((k) => k.includes("koffi")) }));`;
  const r = spawnSync(process.execPath, ["--input-type=module", "-e", script], { encoding: "utf8" });
  expect(r.stderr).toBe("");
  const out = JSON.parse(r.stdout) as { version: string; load: string; loaded: string[] };
  expect(out.load).toBe("function");
  return out;
}

describe.skipIf(process.platform !== "linux")("koffi in the probe child", () => {
  it("from gpuplan's own node_modules: the prebuilt native module only, the installed koffi's version", () => {
    const { version, loaded } = loadAs(join(ROOT, "dist/detect/probe-child.cjs"));
    expect(version).toBe(
      (require(join(ROOT, "node_modules/koffi/package.json")) as { version: string }).version,
    );
    expect(loaded).toHaveLength(1);
    expect(loaded[0]).toMatch(/@koromix\/koffi-linux-\w+\/(linux|musl)_\w+\/koffi\.node$/);
  });

  it("from anywhere else: koffi's own loader, by name", () => {
    const { loaded } = loadAs(join(ROOT, "test/detect/somewhere/else/probe-child.cjs"));
    expect(loaded.some((k) => k.endsWith("koffi/index.cjs"))).toBe(true);
  });
});
