// The values code takes from the schemas instead of restating them: per definition ($defs entry,
// or `root` for the document itself) the `default` of each property, the `enum` of an
// enumeration, the `pattern` of a string format and the `maximum` of a number; and where a definition has fields a reader
// may fill in, its property names in order (`keys`) and those an `x-default` derives (`derived`). scripts/generate-validators.mjs writes them
// to src/generated/schema-values.js with literal types, one export per schema.

/** `{ defaults, enums, patterns, keys, derived, maximums }` of one parsed schema, keyed by definition name. */
export function schemaValues(schema) {
  const defaults = {};
  const enums = {};
  const patterns = {};
  const keys = {};
  const derived = {};
  const maximums = {};
  for (const [name, def] of Object.entries({ root: schema, ...schema.$defs })) {
    const own = Object.entries(def.properties ?? {}).filter(([, p]) => "default" in p);
    if (own.length > 0) defaults[name] = Object.fromEntries(own.map(([key, p]) => [key, p.default]));
    const absent = Object.entries(def.properties ?? {}).filter(([, p]) => "x-default" in p);
    if (absent.length > 0) derived[name] = absent.map(([key]) => key);
    if (own.length > 0 || absent.length > 0) keys[name] = Object.keys(def.properties);
    if (Array.isArray(def.enum)) enums[name] = def.enum;
    const pattern = def.pattern ?? def.anyOf?.find((branch) => branch.type === "string")?.pattern;
    if (typeof pattern === "string") patterns[name] = pattern;
    // A format with a number and a string form (a duration): the number's bound holds the string too.
    const maximum = def.maximum ?? def.anyOf?.find((branch) => branch.type === "integer")?.maximum;
    if (typeof maximum === "number") maximums[name] = maximum;
  }
  return { defaults, enums, patterns, keys, derived, maximums };
}

/** A TypeScript type that is exactly this JSON value, read-only all the way down. */
export function literalType(value) {
  if (Array.isArray(value)) return `readonly [${value.map(literalType).join(", ")}]`;
  if (value !== null && typeof value === "object")
    return `{ ${Object.entries(value)
      .map(([k, v]) => `readonly ${JSON.stringify(k)}: ${literalType(v)}`)
      .join("; ")} }`;
  return JSON.stringify(value);
}

/** `compile-report` → `compileReportSchema`. */
export const exportName = (name) => `${name.replace(/-([a-z])/g, (_, c) => c.toUpperCase())}Schema`;
