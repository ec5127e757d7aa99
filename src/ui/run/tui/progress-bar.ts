/** The overall progress bar as text: `[████░░░░]` with `width` cells inside the brackets. */
export function progressBar(done: number, total: number, width: number): string {
  const cells = Math.max(1, width);
  const filled = total > 0 ? Math.min(cells, Math.floor((done / total) * cells)) : 0;
  return `[${"█".repeat(filled)}${"░".repeat(cells - filled)}]`;
}
