/**
 * The CLI decides colour once per stream, and every output — problems, tables, run lines, the
 * live view — gets a painter of that level (src/ui/paint.ts). Colour is for a person at a terminal.
 */
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

const decided = new Map<Terminal, ColorLevel>();

/** The colour level of stdout or stderr, decided on first use and the same for the rest of the command. */
export function colorLevelOf(stream: NodeJS.WriteStream = process.stderr): ColorLevel {
  let level = decided.get(stream);
  if (level === undefined) {
    level = decideColorLevel(stream);
    decided.set(stream, level);
  }
  return level;
}

/** The painter for what goes to `stream` (stderr: problems and chatter; stdout: tables). */
export function paintFor(stream: NodeJS.WriteStream = process.stderr): Promise<Paint> {
  return loadPaint(colorLevelOf(stream));
}
