/** Why a committed plan differs from what compile writes now — in words a CI log reader can act on. */
export function describeStaleness(currentText: string, expectedText: string): string {
  let current: Record<string, unknown>;
  try {
    current = JSON.parse(currentText) as Record<string, unknown>;
  } catch {
    return "it is not valid JSON";
  }
  const expected = JSON.parse(expectedText) as Record<string, unknown>;
  const get = (o: Record<string, unknown>, ...path: string[]): unknown =>
    path.reduce<unknown>(
      (v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
      o,
    );
  const reasons: string[] = [];
  if (current.schema !== expected.schema)
    reasons.push(`its format is ${String(current.schema)}, now ${String(expected.schema)}`);
  if (current.gpuplanVersion !== expected.gpuplanVersion) {
    reasons.push(
      `it was written by gpuplan ${String(current.gpuplanVersion)}, this is ${String(expected.gpuplanVersion)}`,
    );
  }
  if (get(current, "source", "sha256") !== get(expected, "source", "sha256"))
    reasons.push("the pipeline file changed");
  if (get(current, "inventory", "fingerprint") !== get(expected, "inventory", "fingerprint")) {
    reasons.push(
      `the inventory changed (${String(get(current, "inventory", "label"))} → ${String(get(expected, "inventory", "label"))})`,
    );
  }
  return reasons.length
    ? reasons.join("; ")
    : "its content differs (edited by hand, or compiled with other options)";
}
