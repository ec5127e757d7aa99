// Step 1: fake the raw tiles of one plate: a 16×16 image per tile with a plate-specific
// illumination gradient and noise (deterministic per plate, so reruns agree).
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { arg, plateDir } from "./plate-files.mjs";

const plate = arg("plate", "P1");
const tiles = Number(arg("tiles", "16"));
let seed = [...plate].reduce((h, c) => (h * 31 + c.charCodeAt(0)) >>> 0, 7);
const random = () => {
  seed = (seed * 1664525 + 1013904223) >>> 0;
  return seed / 2 ** 32;
};

const out = [];
for (let t = 0; t < tiles; t++) {
  const pixels = [];
  for (let y = 0; y < 16; y++)
    for (let x = 0; x < 16; x++) pixels.push(Math.round(800 + 40 * x + 25 * y + 300 * random() + 50 * t));
  out.push({ tile: t, row: Math.floor(t / 4), col: t % 4, pixels });
}
const file = join(plateDir(plate), "raw.json");
writeFileSync(file, JSON.stringify(out));
process.stdout.write(`plate ${plate}: generated ${tiles} tiles of 16×16 pixels\n`);
