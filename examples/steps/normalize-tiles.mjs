// Step 2: flat-field correction (divide by the plate's mean image) and min-max scaling to [0, 1].
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { arg, plateDir } from "./plate-files.mjs";

const plate = arg("plate", "P1");
const dir = plateDir(plate);
const raw = JSON.parse(readFileSync(join(dir, "raw.json"), "utf8"));
const flat = raw[0].pixels.map((_, i) => raw.reduce((s, t) => s + t.pixels[i], 0) / raw.length);
const corrected = raw.map((t) => ({ ...t, pixels: t.pixels.map((v, i) => v / flat[i]) }));
const all = corrected.flatMap((t) => t.pixels);
const min = Math.min(...all);
const max = Math.max(...all);
const scaled = corrected.map((t) => ({ ...t, pixels: t.pixels.map((v) => (v - min) / (max - min || 1)) }));
writeFileSync(join(dir, "normalized.json"), JSON.stringify(scaled));
process.stdout.write(
  `plate ${plate}: normalized ${scaled.length} tiles (raw range ${min.toFixed(3)}–${max.toFixed(3)})\n`,
);
