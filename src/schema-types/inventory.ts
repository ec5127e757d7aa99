/* Generated from schemas/inventory.schema.json by scripts/generate-types.mjs. Do not edit; edit the schema. */

/**
 * A GPU's software stack: cuda (NVIDIA) or rocm (AMD).
 */
export type GpuBackend = "cuda" | "rocm";
/**
 * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
 *
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "Size".
 */
export type Size = number | string;

/**
 * The GPUs and CPU a plan is compiled against: either what `gpuplan detect --json` prints (schema gpuplan/inventory@1) or a hand-written short form.
 */
export interface GpuplanInventory {
  [k: string]: unknown;
}
/**
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "Inventory".
 */
export interface Inventory {
  schema: "gpuplan/inventory@1";
  gpuplanVersion?: string;
  source?: "detect" | "file" | "target";
  host?: {
    hostname: string;
    platform: string;
    arch: string;
    kernel?: string;
  };
  cpu: CpuInfo;
  /**
   * @maxItems 1024
   */
  gpus: GpuInfo[];
  drivers?: Drivers;
  visibility?: Visibility;
  probes: ProbeReport[];
}
/**
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "Cpu".
 */
export interface CpuInfo {
  model: string;
  logicalCores: number;
  /**
   * Cores this process may use: CPU affinity and the cgroup CPU quota applied.
   */
  usableCores: number;
  /**
   * Memory this process may use: the smaller of physical memory and the cgroup limit.
   */
  memoryBytes: number;
  availableMemoryBytes?: number | null;
  numaNodes?: {
    id: number;
    cpus: number[];
    memoryBytes?: number | null;
  }[];
  cgroup?: {
    version?: 1 | 2;
    cpuQuota?: number | null;
    memoryLimitBytes?: number | null;
  } | null;
}
/**
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "Gpu".
 */
export interface GpuInfo {
  /**
   * cuda:N / rocm:N in PCI bus order; a MIG instance is cuda:N/migK.
   */
  id: string;
  /**
   * Index in PCI bus order among this backend's GPUs.
   */
  index?: number;
  backend: GpuBackend;
  name: string;
  /**
   * GPU-… (NVIDIA), MIG-… (MIG instance), or the AMD unique id.
   */
  uuid: string;
  /**
   * Normalized domain:bus:device.function, lower case: 0000:3b:00.0
   */
  pciBusId: string | null;
  /**
   * Bytes of GPU memory; 0 when unknown. At most 1 PiB (2^50): detection leaves a larger figure from a vendor library unknown.
   */
  memoryBytes: number;
  freeMemoryBytes?: number | null;
  usedMemoryBytes?: number | null;
  /**
   * CUDA compute capability like "9.0"; for AMD the gfx target like "gfx942".
   */
  computeCapability: string | null;
  architecture?: string | null;
  brand?: string | null;
  serial?: string | null;
  driverVersion?: string | null;
  numaNode?: number | null;
  cpuAffinity?: number[] | null;
  powerWatts?: number | null;
  temperatureC?: number | null;
  utilizationPercent?: number | null;
  /**
   * Compute processes using the GPU, as the vendor library lists them (NVML, ROCm SMI); null when it cannot say. Like free memory, power and temperature, left out of the inventory fingerprint.
   */
  processes?: GpuProcess[] | null;
  /**
   * Ordinal in the CUDA driver's own enumeration order (fastest first unless CUDA_DEVICE_ORDER=PCI_BUS_ID).
   */
  cudaIndex?: number | null;
  hipIndex?: number | null;
  /**
   * null when the GPU has no MIG support or it is unknown.
   */
  mig: {
    enabled: boolean;
    /**
     * Set on MIG instance devices: the physical GPU.
     */
    parentUuid?: string;
    /**
     * Set on MIG instance devices: the GPU instance. Compute instances of one GPU instance share its memory, and compile splits its budget between them.
     */
    gpuInstanceId?: number;
    computeInstanceId?: number;
  } | null;
  sources?: string[];
}
/**
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "GpuProcess".
 */
export interface GpuProcess {
  /**
   * As the vendor library reports it.
   */
  pid: number;
  /**
   * GPU memory the process uses on this GPU; null when the library does not say.
   */
  usedMemoryBytes: number | null;
  /**
   * The owner's user name (the uid when /etc/passwd does not name it); null when this process cannot see it in /proc (another pid namespace, a process that already ended).
   */
  user: string | null;
  /**
   * Its command line from /proc (arguments joined by spaces, at most 1000 characters); null when unknown.
   */
  command: string | null;
  /**
   * Set when `gpuplan run` started the process: one of its ancestors is a gpuplan run that holds a GPU slot lock (checked with flock, so a stale record never counts) and started before it took the slot.
   */
  gpuplan: {
    run: string;
    /**
     * null when the run holds slots for several pipelines and which one started the process is not known.
     */
    pipeline: string | null;
    step: string | null;
  } | null;
}
/**
 * Driver and runtime versions, the header nvidia-smi and amd-smi print. A vendor is present when one of its libraries told any of them.
 *
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "Drivers".
 */
export interface Drivers {
  nvidia?: {
    /**
     * NVIDIA driver version, from NVML: "550.54.15".
     */
    driverVersion: string | null;
    /**
     * The newest CUDA version the driver supports (NVML, else libcuda): "12.4".
     */
    cudaVersion: string | null;
  };
  amd?: {
    /**
     * amdgpu kernel driver version, from ROCm SMI or AMD SMI.
     */
    driverVersion: string | null;
    /**
     * The HIP runtime's version, which follows the ROCm release it ships in (6.3.x in ROCm 6.3).
     */
    hipVersion: string | null;
  };
}
/**
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "Visibility".
 */
export interface Visibility {
  /**
   * false with --all
   */
  applied: boolean;
  narrowedBy: string[];
  variables?: {
    [k: string]: string;
  };
  hiddenGpus?: number;
}
/**
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "Probe".
 */
export interface ProbeReport {
  name: "nvml" | "cuda" | "rocm-smi" | "amd-smi" | "hip" | "sysfs" | "cpu";
  status: "ok" | "not-found" | "no-devices" | "error" | "timeout" | "skipped";
  message: string;
  hint?: string;
  library?: string | null;
  version?: string | null;
  durationMs: number;
}
/**
 * Hand-written inventory: GPU kinds with counts, and the CPU.
 *
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "ShortInventory".
 */
export interface ShortInventory {
  gpus?: ShortInventoryGpu[];
  cpu: ShortInventoryCpu;
  slurm?: ShortInventorySlurm;
}
/**
 * One kind of GPU in the short form: `count` identical cards.
 *
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "ShortGpu".
 */
export interface ShortInventoryGpu {
  name: string;
  memory: Size;
  /**
   * Identical cards of this kind; an inventory holds at most 1024 GPUs in all.
   */
  count?: number;
  backend?: GpuBackend & string;
  compute_capability?: string;
  /**
   * The cards' UUIDs: one per card (`count` of them), none twice in the inventory; without them each gets a stable synthetic one.
   */
  uuids?: string[];
}
/**
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "ShortCpu".
 */
export interface ShortInventoryCpu {
  threads: number;
  /**
   * Bytes, or a size like 12GiB, 800MiB, 16GB (GiB = 1024^3, GB = 1000^3).
   */
  memory?: number | string;
  model?: string;
}
/**
 * Set by `gpuplan detect --slurm`: the Slurm node type these figures describe, and how its GPUs are asked for (`--gres=gpu:TYPE:N`, `--gres=shard:TYPE:K`).
 *
 * This interface was referenced by `GpuplanInventory`'s JSON-Schema
 * via the `definition` "ShortSlurm".
 */
export interface ShortInventorySlurm {
  node_type: string;
  partitions?: string[];
  nodes?: string[];
  gres: {
    /**
     * The `gpus[].name` this GRES is.
     */
    model: string;
    /**
     * The GRES type; null when the cluster's GPUs are untyped.
     */
    type: string | null;
    count: number;
  }[];
  /**
   * Shards (GPU sharing GRES) each GPU of the node has.
   */
  shards_per_gpu?: number;
}
