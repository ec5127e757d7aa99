/**
 * Finds the vendor libraries without loading them (loading happens only in the probe child):
 * an override variable names the file; otherwise the directories the dynamic loader searches
 * for a soname (LD_LIBRARY_PATH, /etc/ld.so.conf, the defaults), then the usual install
 * paths of the CUDA and ROCm packages. When nothing is found the child is never started.
 * Every path found is absolute: dlopen searches the system's directories for a name without a
 * `/`, so a relative `GPUPLAN_NVML_LIBRARY=mynvml.so` (or LD_LIBRARY_PATH entry) would load
 * another library than the one checked here.
 */
import { readdirSync, readFileSync, type Stats, statSync } from "node:fs";
import { dirname, join, resolve } from "node:path";
import type { VendorProbeName } from "./probe-types.js";

interface LibrarySpec {
  override: string;
  /** File names: the soname first, then other versions. */
  pattern: RegExp;
  soname: string;
}

export const LIBRARIES: Record<VendorProbeName, LibrarySpec> = {
  nvml: {
    override: "GPUPLAN_NVML_LIBRARY",
    soname: "libnvidia-ml.so.1",
    pattern: /^libnvidia-ml\.so(\.\d+)*$/,
  },
  cuda: { override: "GPUPLAN_CUDA_LIBRARY", soname: "libcuda.so.1", pattern: /^libcuda\.so(\.\d+)*$/ },
  "rocm-smi": {
    override: "GPUPLAN_ROCM_SMI_LIBRARY",
    soname: "librocm_smi64.so",
    pattern: /^librocm_smi64\.so(\.\d+)*$/,
  },
  "amd-smi": {
    override: "GPUPLAN_AMD_SMI_LIBRARY",
    soname: "libamd_smi.so",
    pattern: /^libamd_smi\.so(\.\d+)*$/,
  },
  hip: { override: "GPUPLAN_HIP_LIBRARY", soname: "libamdhip64.so", pattern: /^libamdhip64\.so(\.\d+)*$/ },
};

/** Where each library was found, or why not. */
export type LibraryLookup = { found: true; path: string } | { found: false; reason: string };

const DEFAULT_DIRS = [
  "/lib64",
  "/usr/lib64",
  "/lib",
  "/usr/lib",
  "/lib/x86_64-linux-gnu",
  "/usr/lib/x86_64-linux-gnu",
];
const INSTALL_DIRS = [
  "/usr/local/nvidia/lib64", // nvidia-container-toolkit mounts
  "/usr/lib/wsl/lib", // WSL2
  "/usr/lib/x86_64-linux-gnu/nvidia/current", // Debian's packaging
  "/usr/local/cuda/lib64",
  "/usr/local/cuda/compat",
  "/opt/rocm/lib",
  "/opt/rocm/lib64",
];

/** Directories in the dynamic loader's order, then the install paths. */
export function searchDirectories(env: NodeJS.ProcessEnv, ldSoConf = "/etc/ld.so.conf"): string[] {
  const dirs = [
    ...(env.LD_LIBRARY_PATH ?? "").split(":").filter(Boolean),
    ...readLdSoConf(ldSoConf, new Set()),
    ...DEFAULT_DIRS,
    ...(env.ROCM_PATH ? [join(env.ROCM_PATH, "lib")] : []),
    ...(env.CUDA_PATH ? [join(env.CUDA_PATH, "lib64")] : []),
    ...INSTALL_DIRS,
  ];
  return [...new Set(dirs)];
}

/** The directories named in ld.so.conf, following its `include` globs (one `*` level). */
function readLdSoConf(file: string, seen: Set<string>): string[] {
  if (seen.has(file)) return [];
  seen.add(file);
  let text: string;
  try {
    text = readFileSync(file, "utf8");
  } catch {
    return [];
  }
  const dirs: string[] = [];
  for (const raw of text.split("\n")) {
    const line = raw.replace(/#.*/, "").trim();
    if (!line) continue;
    const include = /^include\s+(.+)$/.exec(line);
    if (!include) {
      dirs.push(line);
      continue;
    }
    const pattern = include[1]!.startsWith("/") ? include[1]! : join(dirname(file), include[1]!);
    const dir = dirname(pattern);
    const base = new RegExp(
      `^${pattern
        .slice(dir.length + 1)
        .replace(/\./g, "\\.")
        .replace(/\*/g, ".*")}$`,
    );
    let names: string[] = [];
    try {
      names = readdirSync(dir)
        .filter((n) => base.test(n))
        .sort();
    } catch {}
    for (const n of names) dirs.push(...readLdSoConf(join(dir, n), seen));
  }
  return dirs;
}

/**
 * Find every vendor library; `dirs` defaults to searchDirectories(env), worked out only when a
 * library has no override (reading ld.so.conf is part of detect's start-up).
 */
export function findLibraries(
  env: NodeJS.ProcessEnv,
  given?: string[],
): Record<VendorProbeName, LibraryLookup> {
  let dirs = given;
  const listings = new Map<string, string[]>();
  const list = (dir: string): string[] => {
    let names = listings.get(dir);
    if (!names) {
      try {
        names = readdirSync(dir);
      } catch {
        names = [];
      }
      listings.set(dir, names);
    }
    return names;
  };
  const out = {} as Record<VendorProbeName, LibraryLookup>;
  for (const [name, spec] of Object.entries(LIBRARIES) as [VendorProbeName, LibrarySpec][]) {
    const override = env[spec.override];
    if (override !== undefined && override !== "") {
      const path = resolve(override);
      const notLibrary = whyNotALibraryFile(path);
      out[name] =
        notLibrary === null
          ? { found: true, path }
          : { found: false, reason: `${spec.override}=${override}: ${notLibrary}` };
      continue;
    }
    out[name] = { found: false, reason: `${spec.soname} not found` };
    dirs ??= searchDirectories(env);
    for (const dir of dirs) {
      const matches = list(dir).filter((n) => spec.pattern.test(n));
      if (!matches.length) continue;
      // Prefer the soname, then the shortest name (a versioned soname over its full version).
      const best = matches.includes(spec.soname)
        ? spec.soname
        : matches.sort((a, b) => a.length - b.length)[0]!;
      out[name] = { found: true, path: resolve(dir, best) };
      break;
    }
  }
  return out;
}

/**
 * Why an override cannot be the library, or null when it is a regular file (through links):
 * dlopen reads whatever it is given, so a FIFO or a terminal (/dev/stdin) held the probe child
 * until --timeout, and detect then blamed a wedged GPU or driver.
 */
function whyNotALibraryFile(path: string): string | null {
  let st: Stats;
  try {
    st = statSync(path);
  } catch (e) {
    const errno = (e as NodeJS.ErrnoException).code;
    return errno === "EACCES" ? "permission denied" : "no such file";
  }
  if (st.isFile()) return null;
  if (st.isDirectory()) return "a directory, not a library file";
  if (st.isFIFO()) return "a FIFO, not a library file";
  if (st.isSocket()) return "a socket, not a library file";
  return "a device, not a library file";
}
