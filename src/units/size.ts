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
