/** Bash words that are exactly the given text, whatever it holds: single quotes, `'` as `'\''`. */
export function shellQuote(text: string): string {
  return /^[A-Za-z0-9_./:@%+=,-]+$/.test(text) ? text : `'${text.replaceAll("'", `'\\''`)}'`;
}

/**
 * `#SBATCH` lines are read by sbatch, not by a shell: no quoting to rely on, and `%` starts a
 * file-name pattern. Values placed there must be plain.
 */
export const SBATCH_SAFE = /^[A-Za-z0-9_./:@+=,~-]+$/;
