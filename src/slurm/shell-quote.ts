/**
 * `#SBATCH` lines are read by sbatch, not by a shell: no quoting to rely on, and `%` starts a
 * file-name pattern. Values placed there must be plain.
 */
export const SBATCH_SAFE = /^[A-Za-z0-9_./:@+=,~-]+$/;
