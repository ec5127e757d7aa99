/**
 * Intervals into as few lanes as can hold them without overlap: each, in start order, goes to the
 * lowest-numbered lane free at its start (interval partitioning; the lanes used equal the most
 * intervals open at once). Used for host lanes, which no event numbers, and for the plan's bars.
 */

export interface Interval {
  start: number;
  end: number;
}

/** The lane of each interval (same order as given) and how many lanes there are. */
export function assignLanes(
  intervals: readonly Interval[],
  busyUntil: number[] = [],
): { lanes: number[]; count: number } {
  const order = intervals.map((_, i) => i).sort((a, b) => intervals[a]!.start - intervals[b]!.start || a - b);
  const lanes = new Array<number>(intervals.length).fill(0);
  for (const i of order) {
    const { start, end } = intervals[i]!;
    let lane = busyUntil.findIndex((until) => until <= start);
    if (lane < 0) {
      lane = busyUntil.length;
      busyUntil.push(end);
    } else {
      busyUntil[lane] = end;
    }
    lanes[i] = lane;
  }
  return { lanes, count: busyUntil.length };
}
