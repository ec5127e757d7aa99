/**
 * Milliseconds from a monotonic clock. process.hrtime rather than the `performance` global,
 * whose first use loads perf_hooks: a few milliseconds of start-up in both processes.
 */
export const nowMs = (): number => Number(process.hrtime.bigint()) / 1e6;
