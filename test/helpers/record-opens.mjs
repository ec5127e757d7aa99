// Preload (`node --import`) that appends to GPUPLAN_TEST_OPEN_LOG, one per line, every path
// matching GPUPLAN_TEST_OPEN_PATTERN that the process opens or reads whole through node:fs
// (openSync, open, readFileSync, readFile, fs/promises open and readFile), so a test can count
// how often a command reads a file.

// Preload (`node --import`) that appends to GPUPLAN_TEST_OPEN_LOG, one per line, every path
// matching GPUPLAN_TEST_OPEN_PATTERN that the process opens or reads whole through node:fs
// (openSync, open, readFileSync, readFile, fs/promises open and readFile), so a test can count
// how often a command reads a file.
import fs, { appendFileSync } from "node:fs";
import { syncBuiltinESMExports } from "node:module";

const log = process.env.GPUPLAN_TEST_OPEN_LOG;
const pattern = process.env.GPUPLAN_TEST_OPEN_PATTERN;
if (log && pattern) {
  const re = new RegExp(pattern);
  const note = (path) => {
    const name = typeof path === "string" ? path : path instanceof URL ? path.pathname : null;
    if (name !== null && re.test(name)) appendFileSync(log, `${name}\n`);
  };
  const wrap = (target, key) => {
    const original = target[key];
    target[key] = function (path, ...rest) {
      note(path);
      return original.call(this, path, ...rest);
    };
  };
  for (const key of ["openSync", "open", "readFileSync", "readFile"]) wrap(fs, key);
  for (const key of ["open", "readFile"]) wrap(fs.promises, key);
  syncBuiltinESMExports();
}
