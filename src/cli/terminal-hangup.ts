/**
 * A terminal gpuplan started on that has gone away (an ssh connection dropped, a window closed):
 * Node 20 restores each terminal's settings as it exits and aborts when the terminal is no longer
 * there (nodejs/node#51519, fixed upstream by #58200) — SIGABRT, status 134 and a core file where
 * core dumps are on, after a run that stopped cleanly and wanted to exit 129. With a
 * terminal gone, gpuplan ends as a hang-up ends a program: killed by SIGHUP (129 to a shell), which
 * skips that restore.
 */
import { isatty } from "node:tty";

/** Watch stdin, stdout and stderr that are terminals now; at exit, end by SIGHUP if one hung up. */
export function endByHangupWhenTerminalGone(): void {
  const terminals = [0, 1, 2].filter((fd) => isatty(fd));
  if (terminals.length === 0) return;
  process.once("exit", () => {
    // A hung-up terminal answers every ioctl with EIO: isatty() says no.
    if (terminals.every((fd) => isatty(fd))) return;
    process.removeAllListeners("SIGHUP");
    process.kill(process.pid, "SIGHUP");
  });
}
