/**
 * The lines of a file's text, as `text.split("\n")` gives them, one at a time: a split builds an
 * array of every line first, and V8 caps an array near 134 million elements — a journal of 300 MB
 * of newlines (a damaged or hostile file) ended `gpuplan runs` in a fatal V8 error with a native
 * stack (exit 133) instead of a line of text.
 */
export function forEachLine(text: string, fn: (line: string, index: number, last: boolean) => void): void {
  let start = 0;
  for (let index = 0; ; index++) {
    const end = text.indexOf("\n", start);
    if (end === -1) {
      fn(text.slice(start), index, true);
      return;
    }
    fn(text.slice(start, end), index, false);
    start = end + 1;
  }
}
