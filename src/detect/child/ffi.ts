/**
 * Thin helpers over koffi for the probes. Everything is passed as raw buffers and decoded by
 * the offsets measured in ABI.md, so that one declaration never silently disagrees with a
 * library release; handles travel as BigInt pointers (koffi 3).
 */
import type { LibraryHandle } from "koffi";
import { loadKoffi } from "../../libc/load-koffi.js";
import { textFromBytes } from "../../text/bytes-text.js";
import type { SymbolTable } from "./symbols/table.js";

const koffi = loadKoffi();

export type NativeFn = (...args: unknown[]) => unknown;

/**
 * A loaded vendor library, bound only through its symbol table (symbols/*.ts), whose calls report
 * themselves before they run (for crash reports).
 */
export class VendorLibrary<T extends SymbolTable> {
  private readonly lib: LibraryHandle;

  constructor(
    readonly path: string,
    private readonly symbols: T,
    private readonly onCall: (name: string) => void,
  ) {
    this.lib = koffi.load(path);
  }

  /** A function the probe cannot do without; throws when the library lacks it. */
  need(name: keyof T & string): NativeFn {
    const fn = this.fn(name);
    if (!fn) throw new MissingSymbolError(name, this.path);
    return fn;
  }

  /** A function some releases lack: null when this library does not export it. */
  fn(name: keyof T & string): NativeFn | null {
    let native: NativeFn;
    try {
      native = this.lib.func(this.symbols[name]!.c) as NativeFn;
    } catch (e) {
      // Only a missing symbol is "not exported"; a declaration koffi cannot parse is our bug.
      if (e instanceof Error && e.message.startsWith("Cannot find function")) return null;
      throw e;
    }
    return (...args: unknown[]) => {
      this.onCall(name);
      return native(...args);
    };
  }

  /** The first of several names the library exports (the versioned symbol first). */
  first(...names: (keyof T & string)[]): NativeFn | null {
    for (const name of names) {
      const fn = this.fn(name);
      if (fn) return fn;
    }
    return null;
  }
}

class MissingSymbolError extends Error {
  constructor(
    readonly symbol: string,
    library: string,
  ) {
    super(`${library} does not export ${symbol}`);
  }
}

/**
 * A NUL-terminated string from a buffer (at an offset, within a maximum length). Drivers are not
 * bound to UTF-8: other bytes are spelled out (src/text/bytes-text.ts), so that an inventory made
 * from them loads again.
 */
export function cString(buf: Buffer, offset = 0, max = buf.length - offset): string {
  const end = buf.indexOf(0, offset);
  const stop = end === -1 || end > offset + max ? offset + max : end;
  return textFromBytes(buf.subarray(offset, stop)).trim();
}

/** Longer than any error or version string a vendor library returns: a pointer past it is not believed to end. */
const MAX_C_STRING = 4096;

/**
 * Decode a `const char *` returned through an out-pointer or as a result (declared `void *`, so
 * koffi hands over the pointer, not a string it decoded as UTF-8): byte by byte up to its NUL,
 * decoded as cString does.
 */
export function decodeCString(ptr: unknown): string | null {
  if (ptr === null || ptr === undefined || ptr === 0n) return null;
  const bytes: number[] = [];
  for (let i = 0; i < MAX_C_STRING; i++) {
    const byte = koffi.decode(ptr, i, "uint8_t") as number;
    if (byte === 0) break;
    bytes.push(byte);
  }
  return textFromBytes(Uint8Array.from(bytes));
}

export const pointerAt = (buf: Buffer, offset = 0): bigint => buf.readBigUInt64LE(offset);

/** Expand a CPU bit mask made of `unsigned long` words (64 CPUs each) into CPU numbers. */
export function cpuMaskToList(buf: Buffer, words: number): number[] {
  const cpus: number[] = [];
  for (let w = 0; w < words; w++) {
    const word = buf.readBigUInt64LE(w * 8);
    if (word === 0n) continue;
    for (let bit = 0; bit < 64; bit++) if ((word >> BigInt(bit)) & 1n) cpus.push(w * 64 + bit);
  }
  return cpus;
}

const PR_SET_PDEATHSIG = 1;
const SIGKILL = 9;

/**
 * Linux: have the kernel SIGKILL this process when its parent dies (prctl PR_SET_PDEATHSIG),
 * so a probe hung in a driver call cannot be orphaned. Elsewhere, or without libc, a no-op.
 */
export function dieWithParent(): void {
  if (process.platform !== "linux") return;
  try {
    // prctl is variadic: koffi needs the type of each extra argument.
    const prctl = koffi.load("libc.so.6").func("int prctl(int option, ...)");
    prctl(PR_SET_PDEATHSIG, "unsigned long", SIGKILL);
  } catch {
    // musl or an unusual libc: the parent's own deadline still bounds a normal run.
  }
}
