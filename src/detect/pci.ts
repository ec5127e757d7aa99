/**
 * PCI bus ids as the vendors print them, normalized to one form so that GPUs seen by two
 * probes (NVML and CUDA, ROCm SMI and HIP, sysfs) can be matched and ordered.
 */

const BUS_ID_RE = /^(?:([0-9a-fA-F]{1,8}):)?([0-9a-fA-F]{1,2}):([0-9a-fA-F]{1,2})\.([0-7])$/;

/**
 * Normalize a PCI bus id to `dddd:bb:dd.f`, lower case. NVML prints an 8-digit domain
 * (`00000000:3B:00.0`), CUDA and sysfs 4 digits; a missing domain means 0.
 */
export function normalizePciBusId(text: string | null | undefined): string | null {
  if (!text) return null;
  const m = BUS_ID_RE.exec(text.trim());
  if (!m) return null;
  const domain = Number.parseInt(m[1] ?? "0", 16);
  const hex = (n: number, width: number) => n.toString(16).padStart(width, "0");
  return `${hex(domain, 4)}:${hex(Number.parseInt(m[2]!, 16), 2)}:${hex(Number.parseInt(m[3]!, 16), 2)}.${m[4]}`;
}

/**
 * Decode a ROCm SMI / AMD SMI BDFID: domain in bits 32-63, bus 8-15, device 3-7, function 0-2
 * (ABI.md §3). Bits 28-31 may carry a partition id, which is not part of the bus address.
 */
export function formatBdfId(bdfid: bigint): string {
  const domain = Number((bdfid >> 32n) & 0xffffffffn);
  const bus = Number((bdfid >> 8n) & 0xffn);
  const device = Number((bdfid >> 3n) & 0x1fn);
  const fn = Number(bdfid & 0x7n);
  return normalizePciBusId(`${domain.toString(16)}:${bus.toString(16)}:${device.toString(16)}.${fn}`)!;
}

/** Order by PCI bus id (the order nvidia-smi and rocm-smi use); GPUs without one go last. */
export function comparePciBusId(a: string | null | undefined, b: string | null | undefined): number {
  if (a && b) return a < b ? -1 : a > b ? 1 : 0;
  if (a) return -1;
  if (b) return 1;
  return 0;
}
