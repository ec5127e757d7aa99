/**
 * What the CLI writes for the user (a plan, an inventory, a report, sbatch scripts): atomically
 * (src/plan/write-atomic.ts), and Ctrl-C, SIGTERM or SIGHUP meanwhile removes the temporary file,
 * then stops the process as the signal would. A big plan takes seconds to write, and each
 * interrupted write used to leave a `.plan.json.PID.HEX.tmp` of tens of MB behind.
 */
import { rmSync } from "node:fs";
import { type Content, type PathChoice, type WriteMode, writeFileAtomic } from "../plan/write-atomic.js";

const STOP_SIGNALS = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** `choice`: "chosen" when gpuplan picked the path itself (a link there is replaced, not followed). */
export async function writeUserFile(
  path: string,
  text: Content,
  what?: string,
  choice: PathChoice = "named",
): Promise<WriteMode> {
  let tmp: string | null = null;
  const handlers = STOP_SIGNALS.map((signal) => {
    const handler = () => {
      if (tmp !== null) rmSync(tmp, { force: true });
      forget();
      process.kill(process.pid, signal);
    };
    process.on(signal, handler);
    return [signal, handler] as const;
  });
  const forget = () => {
    for (const [signal, handler] of handlers) process.off(signal, handler);
  };
  try {
    return await writeFileAtomic(
      path,
      text,
      what,
      (t) => {
        tmp = t;
      },
      choice,
    );
  } finally {
    forget();
  }
}
