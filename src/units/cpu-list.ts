/** The kernel's CPU list format (`0-3,8,10-11`), used by cpuset, NUMA and affinity files. */

/** Parse a CPU list; malformed parts are ignored. */
export function parseCpuList(text: string): number[] {
  const cpus = new Set<number>();
  for (const part of text.trim().split(",")) {
    const m = /^(\d+)(?:-(\d+))?$/.exec(part.trim());
    if (!m) continue;
    const from = Number(m[1]);
    const to = m[2] === undefined ? from : Number(m[2]);
    for (let c = from; c <= to && c - from < 65536; c++) cpus.add(c);
  }
  return [...cpus].sort((a, b) => a - b);
}

/** Format CPUs back into ranges, for display: [0,1,2,3,8] → "0-3,8". */
export function formatCpuList(cpus: readonly number[]): string {
  const sorted = [...new Set(cpus)].sort((a, b) => a - b);
  const parts: string[] = [];
  for (let i = 0; i < sorted.length; ) {
    let j = i;
    while (j + 1 < sorted.length && sorted[j + 1] === sorted[j]! + 1) j++;
    parts.push(i === j ? `${sorted[i]}` : `${sorted[i]}-${sorted[j]}`);
    i = j + 1;
  }
  return parts.join(",");
}
