/** stdout carries results, stderr carries chatter (STYLE.md §8). Colour: ./paint.ts. */
export const writeOut = (text: string): void => {
  process.stdout.write(text);
};
export const writeErr = (text: string): void => {
  process.stderr.write(text);
};
