/**
 * A terminal gpuplan started on that has gone away (an ssh connection dropped, a window closed):
 * Node 20 restores each terminal's settings as it exits and aborts when the terminal is no longer
 * there (nodejs/node#51519, fixed upstream by #58200) — SIGABRT, status 134 and a core file where
 * core dumps are on, after a run that stopped cleanly and wanted to exit 129 (or finished, say
 * under `disown`, and wanted 0). With a terminal gone, gpuplan ends through _exit(2) with the
 * status it meant, which skips that restore; where the C library cannot be reached (no koffi), it
 * ends as a hang-up ends a program: killed by SIGHUP (129 to a shell).
 */
import { fileURLToPath } from "node:url";
import { loadKoffi } from "../libc/load-koffi.js";
import { onTerminalDevice } from "./terminal-device.js";

/** Watch stdin, stdout and stderr that are terminals now; at exit, skip Node's restore of one that hung up. */
export function endByHangupWhenTerminalGone(): void {
  const terminals = [0, 1, 2].filter(onTerminalDevice);
  if (terminals.length === 0) return;
  const onExit = (code: number): void => {
    // A hung-up terminal answers every ioctl with EIO: isatty() says no.
    const { isatty } = process.getBuiltinModule("node:tty");
    if (terminals.every((fd) => isatty(fd))) return;
    // What else waits for 'exit' (registered after this: the output guard's exit status, a run's
    // cleanup) runs first, as the emit would have run it: _exit ends the emit here.
    const listeners = process.listeners("exit");
    for (const listener of listeners.slice(listeners.indexOf(onExit) + 1)) {
      try {
        listener.call(process, code);
      } catch {}
    }
    const status = typeof process.exitCode === "number" ? process.exitCode : code;
    try {
      const libc = loadKoffi(fileURLToPath(import.meta.url)).load("libc.so.6");
      libc.func("void _exit(int status)")(status);
    } catch {
      process.removeAllListeners("SIGHUP");
      process.kill(process.pid, "SIGHUP");
    }
  };
  process.on("exit", onExit);
}
