/**
 * Sizes: `12GiB`, `800MiB`, `16GB`, `1.5TiB`, `512` (bytes). GiB = 1024³, GB = 1000³, as the
 * SI/IEC prefixes say — users mix both, and a 16 GB card is not 16 GiB.
 */
import { pipelineSchema } from "../generated/schema-values.js";

const UNITS: Record<string, number> = {
  B: 1,
  KB: 1e3,
  MB: 1e6,
  GB: 1e9,
  TB: 1e12,
  KIB: 1024,
  MIB: 1024 ** 2,
  GIB: 1024 ** 3,
  TIB: 1024 ** 4,
};

/** The schema's pattern (`$defs/Size`) decides what is a size; the unit is its trailing letters. */
const SIZE_RE = new RegExp(pipelineSchema.patterns.Size, "u");

/** Parse a size to bytes; undefined when the text is not a size. */
export function parseSize(value: string | number): number | undefined {
  if (typeof value === "number") return Number.isSafeInteger(value) && value >= 0 ? value : undefined;
  const text = value.trim();
  if (!SIZE_RE.test(text)) return /^[0-9]+$/.test(text) ? Number(text) : undefined;
  const unit = /[A-Za-z]+$/.exec(text)![0];
  const factor = UNITS[unit.toUpperCase()];
  if (factor === undefined) return undefined;
  const bytes = Math.round(Number(text.slice(0, -unit.length).trim()) * factor);
  return Number.isSafeInteger(bytes) ? bytes : undefined;
}

/** What a size's unit may be, for messages. */
export const SIZE_UNITS_TEXT =
  "B, kB, MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024), as in 12GiB, 800MiB, 16GB";

/** Units people write that are not spelt as gpuplan reads them, lower-cased: what each means. */
const SPELLINGS: Record<string, readonly string[]> = {
  b: ["B"],
  byte: ["B"],
  bytes: ["B"],
  kb: ["kB"],
  mb: ["MB"],
  gb: ["GB"],
  tb: ["TB"],
  kib: ["KiB"],
  mib: ["MiB"],
  gib: ["GiB"],
  tib: ["TiB"],
  // Kubernetes' Ki/Mi/Gi/Ti are powers of 1024.
  ki: ["KiB"],
  mi: ["MiB"],
  gi: ["GiB"],
  ti: ["TiB"],
  // Docker's and Slurm's bare letters mean powers of 1024; SI readers mean 1000: both are offered.
  k: ["KiB", "kB"],
  m: ["MiB", "MB"],
  g: ["GiB", "GB"],
  t: ["TiB", "TB"],
  kilobytes: ["kB"],
  megabytes: ["MB"],
  gigabytes: ["GB"],
  terabytes: ["TB"],
  kibibytes: ["KiB"],
  mebibytes: ["MiB"],
  gibibytes: ["GiB"],
  tebibytes: ["TiB"],
};

/**
 * The sizes gpuplan reads that `text` most likely meant (`12gib` → 12GiB, `12G` → 12GiB or 12GB),
 * or none when it is not a number and a unit it knows.
 */
export function sizeSuggestions(text: string): string[] {
  const m = /^\s*([0-9]+(?:\.[0-9]+)?)\s*([A-Za-z]+)\s*$/u.exec(text);
  if (!m) return [];
  const unit = m[2]!.toLowerCase();
  return (Object.hasOwn(SPELLINGS, unit) ? SPELLINGS[unit]! : []).map((u) => `${m[1]}${u}`);
}

/**
 * A size for people, the one formatter gpuplan has: binary units, one decimal below 100 and none
 * above, no ".0" — 14 GiB, 1.5 GiB, 800 MiB, 512 B.
 */
export function formatSize(bytes: number): string {
  const units = ["B", "KiB", "MiB", "GiB", "TiB"];
  let v = bytes;
  let i = 0;
  while (Math.abs(v) >= 1024 && i < units.length - 1) {
    v /= 1024;
    i++;
  }
  const text = i === 0 ? String(Math.round(v)) : String(+v.toFixed(Math.abs(v) >= 100 ? 0 : 1));
  return `${text} ${units[i]}`;
}
