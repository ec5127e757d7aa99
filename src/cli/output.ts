/** stdout carries results, stderr carries chatter (STYLE.md §8). */
export const writeOut = (text: string): void => {
  process.stdout.write(text);
};
export const writeErr = (text: string): void => {
  process.stderr.write(text);
};

/** Colour only for a person at a terminal: a TTY, no NO_COLOR, not CI logs unless FORCE_COLOR. */
export function shouldUseColor(stream: NodeJS.WriteStream = process.stderr): boolean {
  if (process.env.NO_COLOR !== undefined && process.env.NO_COLOR !== "") return false;
  if (process.env.FORCE_COLOR !== undefined && process.env.FORCE_COLOR !== "0") return true;
  return Boolean(stream.isTTY);
}
