/**
 * `target.push(...items)` without the spread: spread arguments go on the call stack, and past
 * ~120,000 of them (a file of 300,000 unknown keys, a Slurm array of 200,000 tasks) Node throws
 * "Maximum call stack size exceeded", which gpuplan could only report as an internal error.
 * Use it wherever `items` grows with the input.
 */
export function append<T>(target: T[], items: Iterable<T>): T[] {
  for (const item of items) target.push(item);
  return target;
}
