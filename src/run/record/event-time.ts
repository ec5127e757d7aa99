/**
 * Whether an event's `ts` is a time at all. The run-events schema's pattern (dddd-dd-ddTdd:dd:dd.dddZ)
 * takes "2026-13-45T99:99:99.999Z", which Date.parse reads as NaN: a reader that took such a line
 * for a run event drew a session from NaN, and `gpuplan report` was an internal error.
 */
export const hasRealTime = (event: { ts: string }): boolean => Number.isFinite(Date.parse(event.ts));
