/**
 * JSON as gpuplan prints and writes it. JSON.stringify escapes C0 controls but leaves DEL and the
 * C1 controls (U+007F–U+009F) raw, and a terminal acts on those (U+009B is CSI): a matrix value or
 * a step name carrying one would reach the terminal through a plan printed on stdout. Such
 * characters can only stand inside JSON strings, so writing them as \u escapes keeps the value.
 */
const RAW = /[\u007f-\u009f\u2028\u2029]/g;
const HAS_RAW = /[\u007f-\u009f\u2028\u2029]/;

export function jsonText(value: unknown, indent?: number): string {
  return escapeRaw(JSON.stringify(value, null, indent));
}

/** JSON text with DEL, the C1 controls and the line separators written as \u escapes. */
export function escapeRaw(json: string): string {
  // Testing first spares the replace on the many short strings of a big plan.
  if (!HAS_RAW.test(json)) return json;
  return json.replace(RAW, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, "0")}`);
}
