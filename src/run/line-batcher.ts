/**
 * Lines written in batches, once per turn of the event loop: one write for the many lines a
 * burst of short steps makes, instead of a system call each.
 */

export interface LineBatcher {
  push(line: string): void;
  /** Write what is collected now (before closing what `write` writes to). */
  flush(): void;
}

/** Collects lines and writes them together on the next turn of the event loop (or at flush()). */
export function createLineBatcher(write: (text: string) => void): LineBatcher {
  let lines: string[] = [];
  let scheduled = false;
  const flush = () => {
    scheduled = false;
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    write(text);
  };
  return {
    push(line) {
      lines.push(line);
      if (!scheduled) {
        scheduled = true;
        setImmediate(flush);
      }
    },
    flush,
  };
}
