/** `1 pipeline`, `3 pipelines`: a count and its noun, plural unless the count is one. */
export function countNoun(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
