/**
 * Whose run a folder is, from the first bytes of its journal and plan: `--history auto` looks
 * through the runs folder newest first for this pipeline file's runs, and reading each folder
 * whole for that (the whole journal for its first line, the whole plan parsed and checked) cost
 * ~2.4 ms a folder — 24 s where 10,000 runs of other files sit beside fewer than five of this
 * one's. This reads 64 KiB of each at most. It answers only when both files say so in the shape
 * gpuplan writes them; anything else (a hand-edited plan, an odd file) is left to the full read.
 */
import { basename, join, resolve } from "node:path";
import { readFileHead, readRunHeader } from "../run/record/run-header-line.js";

// A plan as gpuplan writes it: two-space indent, a top-level key a line, `source` an object
// whose first key is `file` (on the same line or the next). Only top-level keys start a line
// after exactly two spaces (a JSON string holds no raw newline).
const SOURCE_FILE = /^ {2}"source": \{\s*"file": ("(?:[^"\\\n]|\\.)*")/m;
const NAME = /^ {2}"name": ("(?:[^"\\\n]|\\.)*"),?\n/m;

export interface QuickOwner {
  /** The pipeline file the run was compiled from, as `pipelineOf` (read-history.ts) resolves it. */
  pipelineFile: string;
  /** The plan's name. */
  name: string;
}

/** The run's pipeline file and name when its journal header and plan say them plainly; else null. */
export function quickOwner(dir: string): QuickOwner | null {
  const header = readRunHeader(dir);
  if (!header) return null;
  const plan = readFileHead(join(dir, "plan.json"));
  if (plan === null || !plan.startsWith('{\n  "schema": "gpuplan/plan@')) return null;
  const file = SOURCE_FILE.exec(plan)?.[1];
  const name = NAME.exec(plan)?.[1];
  if (file === undefined || name === undefined) return null;
  try {
    const fileText = JSON.parse(file) as unknown;
    const nameText = JSON.parse(name) as unknown;
    if (typeof fileText !== "string" || fileText === "" || typeof nameText !== "string") return null;
    return { pipelineFile: resolve(header.baseDir, basename(fileText)), name: nameText };
  } catch {
    return null;
  }
}
