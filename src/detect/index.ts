/**
 * Live detection: the CPU from /proc and cgroups, GPUs from the vendor libraries (in a child
 * process with a hard deadline), AMD sysfs as the fallback, merged, then narrowed to what the
 * visibility variables let a process see. This module is cheap to import: koffi is loaded only
 * in the probe child, and the child is not started when no vendor library exists.
 */
import { hostname, release } from "node:os";
import type { DetectOptions, Drivers, GpuInfo, Inventory, ProbeReport } from "../inventory/types.js";
import { INVENTORY_SCHEMA } from "../inventory/types.js";
import { VERSION } from "../version.js";
import { probeCpu } from "./cpu.js";
import { dropDuplicateUuids } from "./duplicate-uuids.js";
import { mergeAmd, mergeNvidia } from "./merge.js";
import { claimPlan } from "./prestarted.js";
import { cudaOnlyIfNeeded, planVendorProbes, VENDOR_PROBES, type VendorProbePlan } from "./probe-plan.js";
import type { ProbeResult, RawGpu } from "./probe-types.js";
import { describeProcesses } from "./processes.js";
import { type Roots, rootsFrom } from "./roots.js";
import { runVendorProbes } from "./run-child.js";
import { slotHoldersReader } from "./slot-holders.js";
import { fillNumaNodes, hasNvidiaPciDevice, probeAmdSysfs } from "./sysfs.js";
import { applyVisibility } from "./visibility.js";

export { SLOW_INIT_MS } from "./probe-plan.js";
export const DEFAULT_TIMEOUT_MS = 10_000;

/** Detection plus what the human output needs beyond the inventory. */
export interface Detection {
  inventory: Inventory;
  /** Which variables narrowed the view, one line each. */
  visibilityNotes: string[];
}

/** Detect the machine's GPUs and CPU (the interface compile and run use, STYLE.md §9). */
export async function detectInventory(options: DetectOptions = {}): Promise<Inventory> {
  return (await detect(options)).inventory;
}

/** Detection with the notes for the human output. */
export async function detect(options: DetectOptions = {}): Promise<Detection> {
  const env = options.env ?? process.env;
  const roots = rootsFrom(env);
  // bin/gpuplan.js's pre-start already searched for the libraries, for this same environment.
  const lean = cudaOnlyIfNeeded(options, env);
  const { libraries, tasks, child } = claimPlan(env, lean) ?? planVendorProbes(env, lean);
  // Start the child first (unless bin/gpuplan.js already has): its start-up overlaps with the
  // CPU and sysfs reads below.
  const vendor = tasks.length
    ? runVendorProbes(tasks, { ...child, timeoutMs: options.timeoutMs ?? DEFAULT_TIMEOUT_MS })
    : Promise.resolve([] as ProbeResult[]);
  const cpu = probeCpu(roots);
  const results = new Map((await vendor).map((r) => [r.name, r]));
  explainMissingNvidiaDriver(results.get("nvml"), roots);

  const probes: ProbeReport[] = [cpu.probe, ...vendorReports(results, libraries)];
  // sysfs is the fallback for machines whose ROCm libraries are missing or failed.
  const amdAnswered = results.get("rocm-smi")?.status === "ok" || results.get("amd-smi")?.status === "ok";
  let sysfsGpus: RawGpu[] = [];
  if (amdAnswered) {
    probes.push({ name: "sysfs", status: "skipped", message: "an AMD library answered", durationMs: 0 });
  } else {
    const sysfs = probeAmdSysfs(roots);
    probes.push(sysfs.probe);
    sysfsGpus = sysfs.gpus;
  }

  const all: GpuInfo[] = [
    ...mergeNvidia(results.get("nvml"), results.get("cuda"), env.CUDA_DEVICE_ORDER === "PCI_BUS_ID"),
    ...mergeAmd(results.get("rocm-smi"), results.get("amd-smi"), results.get("hip"), sysfsGpus),
  ];
  const distinct = dropDuplicateUuids(all);
  fillNumaNodes(distinct.gpus, roots);
  const seen = applyVisibility(distinct.gpus, env, options.all ?? false);
  await describeProcesses(seen.gpus, roots, slotHoldersReader(options.lockDir));

  const inventory: Inventory = {
    schema: INVENTORY_SCHEMA,
    gpuplanVersion: VERSION,
    source: "detect",
    host: { hostname: hostname(), platform: process.platform, arch: process.arch, kernel: release() },
    cpu: cpu.cpu,
    gpus: seen.gpus,
    drivers: driverVersions(results),
    visibility: seen.visibility,
    probes,
  };
  return { inventory, visibilityNotes: [...distinct.notes, ...seen.notes] };
}

/** The header nvidia-smi and amd-smi print, from whichever probe told each version. */
function driverVersions(results: Map<string, ProbeResult>): Drivers {
  const drivers: Drivers = {};
  const nvidiaDriver = results.get("nvml")?.driverVersion ?? null;
  const cudaVersion = results.get("nvml")?.cudaVersion ?? results.get("cuda")?.cudaVersion ?? null;
  if (nvidiaDriver || cudaVersion) drivers.nvidia = { driverVersion: nvidiaDriver, cudaVersion };
  const amdDriver = results.get("rocm-smi")?.driverVersion ?? results.get("amd-smi")?.driverVersion ?? null;
  // The HIP probe's version is the runtime's (hipRuntimeGetVersion), known even without a GPU.
  const hipVersion = results.get("hip")?.version ?? null;
  if (amdDriver || hipVersion) drivers.amd = { driverVersion: amdDriver, hipVersion };
  return drivers;
}

const NVML_ERROR_DRIVER_NOT_LOADED = 9;

/**
 * NVML installed but no NVIDIA kernel driver: on a machine with no NVIDIA GPU on the PCI bus
 * (a cloud image with the driver packages, a CPU CI runner) that is "no devices", not an error.
 */
function explainMissingNvidiaDriver(nvml: ProbeResult | undefined, roots: Roots): void {
  if (nvml?.status !== "error" || nvml.initCode !== NVML_ERROR_DRIVER_NOT_LOADED || hasNvidiaPciDevice(roots))
    return;
  nvml.status = "no-devices";
  nvml.message = `${nvml.message}; there is no NVIDIA GPU on the PCI bus`;
  delete nvml.hint;
}

/** One report per vendor probe, in a fixed order: its result, or why its library was not found. */
function vendorReports(
  results: Map<string, ProbeResult>,
  libraries: VendorProbePlan["libraries"],
): ProbeReport[] {
  const reports: ProbeReport[] = [];
  for (const name of VENDOR_PROBES) {
    const r = results.get(name);
    const lookup = libraries[name];
    if (r) reports.push(toReport(r));
    else if (!lookup.found)
      reports.push({ name, status: "not-found", message: lookup.reason, library: null, durationMs: 0 });
  }
  return reports;
}

function toReport(r: ProbeResult): ProbeReport {
  return {
    name: r.name,
    status: r.status,
    message: r.message,
    ...(r.hint ? { hint: r.hint } : {}),
    library: r.library ?? null,
    version: r.version ?? null,
    durationMs: r.durationMs,
  };
}
