/**
 * JSON as gpuplan prints and writes it. JSON.stringify escapes C0 controls but leaves DEL and the
 * C1 controls (U+007F–U+009F) raw, and a terminal acts on those (U+009B is CSI): a matrix value or
 * a step name carrying one would reach the terminal through a plan printed on stdout. The bidi
 * controls and zero-width characters (escapeText's set) too: a GPU name a vendor library ends in
 * U+202E turns the rest of the line round in `detect --json`. Such characters can only stand
 * inside JSON strings, so writing them as \u escapes keeps the value.
 */
const RAW = /[\u007f-\u009f\u061c\u200b-\u200f\u2028-\u202e\u2066-\u2069\ufeff]/g;
const HAS_RAW = new RegExp(RAW.source);

export function jsonText(value: unknown, indent?: number): string {
  return escapeRaw(JSON.stringify(value, null, indent));
}

/** JSON text with DEL, the C1 controls, the line separators and the bidi and zero-width characters written as \u escapes. */
export function escapeRaw(json: string): string {
  // Testing first spares the replace on the many short strings of a big plan.
  if (!HAS_RAW.test(json)) return json;
  return json.replace(RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
