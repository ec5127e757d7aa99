/**
 * The one painter for everything gpuplan shows people: problems, tables, run lines, the live view.
 * Built on chalk with an explicit level — the CLI decides the level once (src/cli/paint.ts) from
 * the TTY, NO_COLOR, FORCE_COLOR and CI, and every output, ink's live view included, paints
 * through this, so one decision holds everywhere. chalk is imported only when there is colour to
 * paint: output to a pipe, a file, CI or under NO_COLOR (every benchmark, most runs) never loads it.
 */

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

const same = (s: string): string => s;

/** No colour: for pipes, files, CI, NO_COLOR, tests. */
export const noPaint: Paint = {
  level: 0,
  red: same,
  green: same,
  yellow: same,
  cyan: same,
  magenta: same,
  gray: same,
  dim: same,
  bold: same,
};

/** The painter for `level`: chalk's `new Chalk({ level })`, or noPaint without loading chalk at level 0. */
export async function loadPaint(level: ColorLevel): Promise<Paint> {
  if (level === 0) return noPaint;
  const { Chalk } = await import("chalk");
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

// biome-ignore lint/suspicious/noControlCharactersInRegex: SGR sequences start with ESC
const SGR = /\u001b\[[0-9;]*m/g;

/** The text without SGR colour sequences: what a person reads, and what its width is measured on. */
export function stripColor(text: string): string {
  return text.replace(SGR, "");
}
