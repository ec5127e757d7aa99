/**
 * A node's `Gres=` value from scontrol: comma-separated `name[:type]:count[(S:sockets)]`, e.g.
 * `gpu:h100:4(S:0-1),shard:h100:16`, `gpu:4`, `gpu:a100:2,gpu:v100:2`, `(null)`. Only names,
 * types and counts matter here; everything is validated, since the text is the cluster's.
 */
export interface GresEntry {
  name: string;
  /** null for an untyped entry like `gpu:4`. */
  type: string | null;
  count: number;
}

export type GresParse = { ok: true; entries: GresEntry[] } | { ok: false; bad: string };

/** GRES names and types: what slurm.conf and AutoDetect produce (`nvidia_a100-sxm4-80gb`, `1g.10gb`). */
const GRES_WORD = /^[A-Za-z0-9][A-Za-z0-9_.+-]{0,63}$/;
const COUNT = /^[0-9]{1,6}$/;

export function parseGres(value: string): GresParse {
  const text = value.trim();
  if (text === "" || text === "(null)" || text === "N/A") return { ok: true, entries: [] };
  const entries: GresEntry[] = [];
  // Socket affinity "(S:0-1)" holds commas of its own ("(S:0,2)"): drop it before splitting.
  for (const item of text.replace(/\(S:[0-9,-]*\)/g, "").split(",")) {
    const parts = item.trim().split(":");
    const name = parts[0] ?? "";
    let type: string | null = null;
    let count = 1;
    if (parts.length === 2) {
      // `gpu:4` is a count, `gpu:h100` a type with count 1 (how slurm.conf reads it too).
      if (COUNT.test(parts[1]!)) count = Number(parts[1]);
      else type = parts[1]!;
    } else if (parts.length === 3) {
      type = parts[1]!;
      if (!COUNT.test(parts[2]!)) return { ok: false, bad: item };
      count = Number(parts[2]);
    } else if (parts.length !== 1) {
      return { ok: false, bad: item };
    }
    if (!GRES_WORD.test(name) || (type !== null && !GRES_WORD.test(type))) return { ok: false, bad: item };
    entries.push({ name, type, count });
  }
  return { ok: true, entries };
}
