/**
 * Why a committed plan differs from what compile writes now — in words a CI log reader can act on.
 * Each part of a plan that has a cause of its own is compared on its own (format, gpuplan version,
 * pipeline bytes, inventory, how the pipeline and inventory are recorded, settings); only a
 * difference none of them explains is put down to a hand edit.
 */
export function describeStaleness(currentText: string, expectedText: string): string {
  let current: Record<string, unknown>;
  try {
    current = JSON.parse(currentText) as Record<string, unknown>;
  } catch {
    return "it is not valid JSON (cut short, or edited by hand)";
  }
  const expected = JSON.parse(expectedText) as Record<string, unknown>;
  const get = (o: Record<string, unknown>, ...path: string[]): unknown =>
    path.reduce<unknown>(
      (v, k) => (v && typeof v === "object" ? (v as Record<string, unknown>)[k] : undefined),
      o,
    );
  const differs = (...path: string[]) =>
    JSON.stringify(get(current, ...path)) !== JSON.stringify(get(expected, ...path));
  const was = (...path: string[]) => String(get(current, ...path));
  const now = (...path: string[]) => String(get(expected, ...path));
  const reasons: string[] = [];
  if (differs("schema")) reasons.push(`its format is ${was("schema")}, now ${now("schema")}`);
  if (differs("gpuplanVersion"))
    reasons.push(`it was written by gpuplan ${was("gpuplanVersion")}, this is ${now("gpuplanVersion")}`);
  if (differs("source", "sha256")) reasons.push("the pipeline file changed");
  if (differs("inventory", "fingerprint"))
    reasons.push(`the inventory changed (${was("inventory", "label")} → ${now("inventory", "label")})`);
  else if (differs("inventory", "label"))
    reasons.push(`it was compiled from ${was("inventory", "label")}, now from ${now("inventory", "label")}`);
  if (differs("source", "file")) {
    reasons.push(
      `it records the pipeline as ${was("source", "file")}, this compile as ${now("source", "file")} ` +
        "(paths are relative to the plan's folder: the plan or the pipeline moved, or an older gpuplan recorded the path as typed)",
    );
  }
  // The settings follow the pipeline file and the machine; with both unchanged, compile options did it.
  if (reasons.length === 0 && differs("settings")) reasons.push("it was compiled with other settings");
  return reasons.length ? reasons.join("; ") : "its content differs: it was edited by hand";
}
