/**
 * The one painter for everything gpuplan shows people: problems, tables, run lines, the live view.
 * Built on chalk with an explicit level — the CLI decides the level once (src/cli/paint.ts) from
 * the TTY, NO_COLOR, FORCE_COLOR and CI, and every output, ink's live view included, paints
 * through this, so one decision holds everywhere. Level 0 gives identity functions.
 */
import { Chalk } from "chalk";

/** chalk's levels: 0 none, 1 the 16 basic colours, 2 256 colours, 3 truecolor. */
export type ColorLevel = 0 | 1 | 2 | 3;

export interface Paint {
  readonly level: ColorLevel;
  red: (s: string) => string;
  green: (s: string) => string;
  yellow: (s: string) => string;
  cyan: (s: string) => string;
  magenta: (s: string) => string;
  gray: (s: string) => string;
  dim: (s: string) => string;
  bold: (s: string) => string;
}

/** The name of one of the painter's styles (`paint[style](text)`). */
export type PaintStyle = Exclude<keyof Paint, "level">;

export function createPaint(level: ColorLevel): Paint {
  const chalk = new Chalk({ level });
  return {
    level,
    red: (s) => chalk.red(s),
    green: (s) => chalk.green(s),
    yellow: (s) => chalk.yellow(s),
    cyan: (s) => chalk.cyan(s),
    magenta: (s) => chalk.magenta(s),
    gray: (s) => chalk.gray(s),
    dim: (s) => chalk.dim(s),
    bold: (s) => chalk.bold(s),
  };
}

/** No colour: for files, pipes, tests. */
export const noPaint: Paint = createPaint(0);

// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR sequences start with ESC
const SGR = /\u001b\[[0-9;]*m/g;

/** The text without SGR colour sequences: what a person reads, and what its width is measured on. */
export function stripColor(text: string): string {
  return text.replace(SGR, "");
}
