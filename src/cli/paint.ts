/**
 * The CLI decides colour once per stream, and every output — problems, tables, run lines, the
 * live view — gets a painter of that level (src/ui/paint.ts). Colour is for a person at a terminal.
 */
import { fstatSync } from "node:fs";
import { isCi } from "../ui/is-ci.js";
import { type ColorLevel, loadPaint, type Paint } from "../ui/paint.js";

interface Terminal {
  isTTY?: boolean;
  getColorDepth?: (env?: NodeJS.ProcessEnv) => number;
}

/**
 * NO_COLOR (set and not empty) turns colour off, whatever else is set (no-color.org). FORCE_COLOR
 * turns it on at its level (1–3; empty or `true` is 1; `0` or `false` off), even into a pipe.
 * Otherwise colour needs a terminal, outside CI (src/ui/is-ci.ts), and not
 * TERM=dumb; its depth is what the terminal declares (Node's getColorDepth: TERM, COLORTERM).
 */
export function decideColorLevel(stream: Terminal, env: NodeJS.ProcessEnv = process.env): ColorLevel {
  if (env.NO_COLOR !== undefined && env.NO_COLOR !== "") return 0;
  const force = env.FORCE_COLOR;
  if (force !== undefined) {
    if (force === "0" || force === "false") return 0;
    const n = Number(force);
    return n === 2 || n === 3 ? n : 1;
  }
  if (!stream.isTTY || env.TERM === "dumb" || isCi(env)) return 0;
  const depth = stream.getColorDepth?.(env) ?? 4;
  return depth >= 24 ? 3 : depth >= 8 ? 2 : depth >= 4 ? 1 : 0;
}

type Output = "stdout" | "stderr";

const decided = new Map<Output, ColorLevel>();

/** The colour level of stdout or stderr, decided on first use and the same for the rest of the command. */
export function colorLevelOf(output: Output = "stderr"): ColorLevel {
  let level = decided.get(output);
  if (level === undefined) {
    level = decideColorLevel(terminalOf(output));
    decided.set(output, level);
  }
  return level;
}

/** The painter for what goes to `output` (stderr: problems and chatter; stdout: tables). */
export function paintFor(output: Output = "stderr"): Promise<Paint> {
  return loadPaint(colorLevelOf(output));
}

/**
 * The output as decideColorLevel sees it, looked at only as far as it asks. Node's stream for it
 * (process.stdout / process.stderr) is created only where the output may be a terminal: creating
 * it loads node:stream, and for a pipe node:net too (~3.5 ms of a 60 ms compile; issue #17), and
 * gpuplan's own texts do not need it (./output-guard.ts).
 */
function terminalOf(output: Output): Terminal {
  const stream = () => (output === "stdout" ? process.stdout : process.stderr);
  return {
    get isTTY() {
      return mayBeTerminal(output === "stdout" ? 1 : 2) && Boolean(stream().isTTY);
    },
    getColorDepth: (env) => stream().getColorDepth?.(env) ?? 4,
  };
}

/** A terminal is a character device; on Linux, never one of the memory devices (/dev/null, /dev/full: major 1). */
function mayBeTerminal(fd: 1 | 2): boolean {
  try {
    const st = fstatSync(fd);
    return st.isCharacterDevice() && !(process.platform === "linux" && ((st.rdev >> 8) & 0xfff) === 1);
  } catch {
    return false;
  }
}
