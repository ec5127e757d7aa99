// Step 3: per-tile mean intensity, the plate's mean and spread, and its brightest tile.
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { arg, plateDir } from "./plate-files.mjs";

const plate = arg("plate", "P1");
const dir = plateDir(plate);
const tiles = JSON.parse(readFileSync(join(dir, "normalized.json"), "utf8"));
const means = tiles.map((t) => ({
  tile: t.tile,
  row: t.row,
  col: t.col,
  mean: t.pixels.reduce((s, v) => s + v, 0) / t.pixels.length,
}));
const plateMean = means.reduce((s, m) => s + m.mean, 0) / means.length;
const sd = Math.sqrt(means.reduce((s, m) => s + (m.mean - plateMean) ** 2, 0) / means.length);
const brightest = means.reduce((a, b) => (b.mean > a.mean ? b : a));
const summary = { plate, tiles: means.length, mean: +plateMean.toFixed(4), sd: +sd.toFixed(4), brightest };
writeFileSync(join(dir, "summary.json"), JSON.stringify(summary, null, 2));
process.stdout.write(
  `plate ${plate}: mean ${summary.mean}, sd ${summary.sd}, brightest tile ${brightest.tile} (row ${brightest.row}, col ${brightest.col})\n`,
);
