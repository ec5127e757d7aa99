/**
 * Colour for everything gpuplan prints for people (problems, run lines, summaries): plain ANSI SGR
 * codes, so no colour library is loaded; `color: false` gives identity functions (NO_COLOR, pipes, CI logs) — decided by the CLI.
 */
export interface Paint {
  red: (s: string) => string;
  green: (s: string) => string;
  yellow: (s: string) => string;
  cyan: (s: string) => string;
  dim: (s: string) => string;
  bold: (s: string) => string;
}

const sgr =
  (open: number, close: number) =>
  (s: string): string =>
    `\u001b[${open}m${s}\u001b[${close}m`;

const identity = (s: string): string => s;

export function createPaint(color: boolean): Paint {
  if (!color) {
    return {
      red: identity,
      green: identity,
      yellow: identity,
      cyan: identity,
      dim: identity,
      bold: identity,
    };
  }
  return {
    red: sgr(31, 39),
    green: sgr(32, 39),
    yellow: sgr(33, 39),
    cyan: sgr(36, 39),
    dim: sgr(2, 22),
    bold: sgr(1, 22),
  };
}
