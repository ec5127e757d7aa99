/**
 * Matrix expansion: one pipeline per combination of the matrix values, in the order the values
 * are written (the first variable varies slowest, like GitHub Actions).
 */
export type MatrixValues = Record<string, string>;

/** A combination as the file could write it: `{ a: "1", b: "" }`. */
export const showValues = (values: MatrixValues): string =>
  `{ ${Object.entries(values)
    .map(([k, v]) => `${k}: ${JSON.stringify(v)}`)
    .join(", ")} }`;

export function expandMatrix(
  matrix: Record<string, readonly (string | number | boolean)[]> | undefined,
): MatrixValues[] {
  if (!matrix) return [{}];
  let combos: MatrixValues[] = [{}];
  for (const [name, values] of Object.entries(matrix)) {
    const next: MatrixValues[] = [];
    for (const combo of combos) for (const v of values) next.push({ ...combo, [name]: String(v) });
    combos = next;
  }
  return combos;
}

/** `{var}` placeholders; `{{` and `}}` are literal braces. */
const PLACEHOLDER = /\{\{|\}\}|\{([A-Za-z_][A-Za-z0-9_]*)\}/g;

/** Substitute matrix values; unknown names are collected, not thrown. */
export function substitute(text: string, values: MatrixValues, unknown: Set<string>): string {
  return text.replace(PLACEHOLDER, (match, name: string | undefined) => {
    if (match === "{{") return "{";
    if (match === "}}") return "}";
    // Own keys only: `{constructor}` is no matrix variable of any pipeline.
    const value = Object.hasOwn(values, name!) ? values[name!] : undefined;
    if (value === undefined) {
      unknown.add(name!);
      return match;
    }
    return value;
  });
}

/** Placeholders in a text: each name, where it starts and the placeholder as written. */
export function placeholderSpans(text: string): { name: string; index: number; text: string }[] {
  const spans: { name: string; index: number; text: string }[] = [];
  for (const m of text.matchAll(PLACEHOLDER))
    if (m[1]) spans.push({ name: m[1], index: m.index, text: m[0] });
  return spans;
}

/** Names used as placeholders in a text. */
export function placeholders(text: string): string[] {
  const names: string[] = [];
  for (const m of text.matchAll(PLACEHOLDER)) if (m[1]) names.push(m[1]);
  return names;
}

/**
 * Variables that take more than one value but are missing from a name: its expansions would
 * share the name. Values compare as the text they become (1 and "1" are one value).
 */
export function varyingNotInName(
  name: string,
  matrix: Record<string, readonly (string | number | boolean)[]> | undefined,
): string[] {
  const used = placeholders(name);
  return Object.entries(matrix ?? {})
    .filter(([v, values]) => new Set(values.map(String)).size > 1 && !used.includes(v))
    .map(([v]) => v);
}
