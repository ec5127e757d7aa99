/**
 * Second-to-second readings (utilisation, temperature, power) as far as they are believed. A
 * library answers "not available" with a sentinel on some releases (0xFFFFFFFF mW is 4,294,967 W)
 * and garbage on broken ones; nvidia-smi shows N/A there, and so does the table (`-`), rather
 * than 4000000000% or -300C. Only shown, never planned on: a bad one is dropped, not explained.
 */

const within = (v: number | null | undefined, min: number, max: number): number | null =>
  v !== null && v !== undefined && Number.isFinite(v) && v >= min && v <= max ? v : null;

/** Busy time in percent: 0 to 100. */
export const believePercent = (v: number | null | undefined): number | null => within(v, 0, 100);

/** A GPU's temperature: below -60 C it is not running, past 200 C it has long shut itself down. */
export const believeCelsius = (v: number | null | undefined): number | null => within(v, -60, 200);

/** A board's power: the largest draw ~1.2 kW (B200); 10 kW is no GPU. */
export const believeWatts = (v: number | null | undefined): number | null => within(v, 0, 10_000);
