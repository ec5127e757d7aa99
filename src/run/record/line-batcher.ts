/**
 * Lines written in batches: one write for the many lines a burst of short steps makes, instead of
 * a system call each. By default once per turn of the event loop; with `delayMs`, at most that
 * long after the first line of a batch (short steps end one per turn, so a turn's batch is often
 * a single step's lines), or sooner once a batch reaches 64 KiB.
 */

export interface LineBatcher {
  push(line: string): void;
  /** Write what is collected now (before closing what `write` writes to). */
  flush(): void;
}

const MAX_BATCH_CHARS = 64 * 1024;

/** Collects lines and writes them together later (see above), or at flush(). */
export function createLineBatcher(write: (text: string) => void, delayMs = 0): LineBatcher {
  let lines: string[] = [];
  let chars = 0;
  let timer: NodeJS.Timeout | NodeJS.Immediate | undefined;
  const flush = () => {
    if (timer !== undefined) {
      if (delayMs > 0) clearTimeout(timer as NodeJS.Timeout);
      else clearImmediate(timer as NodeJS.Immediate);
      timer = undefined;
    }
    if (lines.length === 0) return;
    const text = lines.join("");
    lines = [];
    chars = 0;
    write(text);
  };
  return {
    push(line) {
      lines.push(line);
      chars += line.length;
      if (chars >= MAX_BATCH_CHARS) flush();
      else timer ??= delayMs > 0 ? setTimeout(flush, delayMs) : setImmediate(flush);
    },
    flush,
  };
}
