/**
 * koffi for the probe child, whose start-up `gpuplan detect` waits for, and for the C library a
 * run calls (./libc.ts). Loading koffi by name costs a third of the child's start-up beyond
 * Node's own: resolving the package ("exports" map, node_modules walk), its loader reading the
 * node binary's ELF headers to tell glibc from musl, and an interop copy of its exports. Where
 * npm puts koffi beside gpuplan, the prebuilt native module is loaded directly, as koffi's loader
 * would (the glibc build, then the musl one), and only when its version is the installed
 * koffi's. Anywhere else, or if that fails, koffi's own loader.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";
import type Koffi from "koffi";

type KoffiModule = typeof Koffi;

/**
 * `entry`: a file two folders below gpuplan's root (the child's dist/detect/probe-child.cjs, a
 * bundle chunk in dist/bundle/), whose path anchors the lookup.
 */
export function loadKoffi(entry = process.argv[1] ?? join(process.cwd(), "probe-child.cjs")): KoffiModule {
  const require = createRequire(entry);
  const here = dirname(entry);
  // gpuplan's own node_modules (a checkout, a global install), or the project's it is hoisted into.
  for (const modules of [join(here, "../../node_modules"), join(here, "../../..")]) {
    if (!existsSync(join(modules, "koffi/package.json"))) continue;
    return loadPrebuilt(require, modules) ?? unwrap(require(join(modules, "koffi/index.cjs")));
  }
  return unwrap(require("koffi"));
}

function loadPrebuilt(require: NodeJS.Require, modules: string): KoffiModule | null {
  if (process.platform !== "linux") return null;
  const arch = process.arch;
  const prebuilt = join(modules, `@koromix/koffi-linux-${arch}`);
  try {
    const { version } = JSON.parse(readFileSync(join(modules, "koffi/package.json"), "utf8")) as {
      version?: string;
    };
    for (const triplet of [`linux_${arch}`, `musl_${arch}`]) {
      const file = join(prebuilt, triplet, "koffi.node");
      if (!existsSync(file)) continue;
      try {
        const native = require(file) as KoffiModule & { version?: string };
        if (native.version === version) return native;
      } catch {
        // The other libc's build does not load here: try the next.
      }
    }
  } catch {}
  return null;
}

const unwrap = (loaded: KoffiModule & { default?: KoffiModule }): KoffiModule => loaded.default ?? loaded;
