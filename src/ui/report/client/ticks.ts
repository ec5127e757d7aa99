/**
 * Where the time axis puts its ticks: at a round step that gives about one every 90 px, and never
 * more than MAX_TICKS of them, whatever the span — one event stamped in the year 9999 made a
 * one-tick-a-day axis of 3 million elements that never finished drawing.
 */

/** Round steps up to a day; longer ones are 1, 2 or 5 × 10^k days. */
const STEPS = [
  1, 2, 5, 10, 20, 50, 100, 200, 500, 1e3, 2e3, 5e3, 1e4, 15e3, 3e4, 6e4, 12e4, 3e5, 6e5, 9e5, 18e5, 36e5,
  72e5, 144e5, 288e5, 864e5,
];
const DAY = 864e5;
/** A 64× zoomed timeline on a wide screen is ~100,000 px: ~1,100 ticks at one every 90 px. */
export const MAX_TICKS = 1200;
const PX_PER_TICK = 90;

/** The step between ticks (ms) on an axis of `spanMs` drawn `widthPx` wide. */
export function tickStep(spanMs: number, widthPx: number): number {
  const span = Number.isFinite(spanMs) ? Math.max(1, spanMs) : 1;
  const wanted = Math.max((span / Math.max(1, widthPx)) * PX_PER_TICK, span / MAX_TICKS);
  const step = STEPS.find((s) => s >= wanted);
  if (step !== undefined) return step;
  // Past a day: 1, 2 or 5 × 10^k days, the first that is at least `wanted`.
  const days = wanted / DAY;
  const power = 10 ** Math.floor(Math.log10(days));
  const nice = [1, 2, 5, 10].find((m) => m * power >= days) ?? 10;
  return nice * power * DAY;
}

/** The tick times, 0 first. */
export function ticks(spanMs: number, widthPx: number): number[] {
  const step = tickStep(spanMs, widthPx);
  const span = Number.isFinite(spanMs) ? Math.max(0, spanMs) : 0;
  const out: number[] = [];
  for (let i = 0; i * step <= span && i <= MAX_TICKS; i++) out.push(i * step);
  return out;
}
