/**
 * A word as a shell reads it back, for every command gpuplan prints for a person to paste (hints,
 * resume lines) and for the scripts it writes: plain path characters as they are, anything else
 * in single quotes (`'` as `'\''`). A path with a space stays one word; a plan's text such as
 * `$(touch x)` is never run by the paste.
 */
export function shellWord(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}
