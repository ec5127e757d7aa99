/**
 * The C library through koffi, for the few calls Node does not make: flock(2) for the GPU slot
 * lock, posix_spawn(3) and sched_{get,set}affinity(2) for starting steps. One library handle for
 * the process, loaded on first use (`gpuplan --help` and `compile` never load a native module),
 * and one errno table for the errors of those calls.
 */
import { constants } from "node:os";
import { fileURLToPath } from "node:url";
import { loadKoffi } from "./load-koffi.js";

export interface Libc {
  /** Bind a C function by its prototype, in koffi's syntax. */
  func<T>(prototype: string): T;
  /** errno as the last call through koffi on this thread left it. */
  errno(): number;
  /** glibc's libc.so.6 was loaded; false when the process's own symbols stand in (musl, macOS). */
  glibc: boolean;
}

let loading: Promise<Libc> | undefined;

/** The process-wide C library; rejects where koffi cannot load one at all. */
export function loadLibc(): Promise<Libc> {
  loading ??= bind();
  return loading;
}

async function bind(): Promise<Libc> {
  // By require, not import(): Node 20 would load koffi through its ES module loader (~9 ms, 38
  // more built-in modules), and a bundle chunk holding an import() loses its code cache
  // (scripts/bundle.mjs). This file's own path anchors the lookup, two folders below the package
  // root in dist/ (dist/libc/, dist/bundle/) as in src/.
  const koffi = loadKoffi(fileURLToPath(import.meta.url));
  let lib: ReturnType<typeof koffi.load>;
  let glibc = true;
  try {
    // glibc's soname; musl has none by that name.
    lib = koffi.load("libc.so.6");
  } catch {
    // node itself links libc, so the process's own symbols have what libc has.
    lib = koffi.load(null);
    glibc = false;
  }
  return { func: <T>(prototype: string) => lib.func(prototype) as T, errno: () => koffi.errno(), glibc };
}

const codes = new Map<number, string>(Object.entries(constants.errno).map(([code, n]) => [n, code]));

/** `ENOENT` for 2; `errno N` for a number this platform has no name for. */
export function errnoCode(errno: number): string {
  return codes.get(errno) ?? `errno ${errno}`;
}
