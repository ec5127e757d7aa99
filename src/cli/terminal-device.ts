/**
 * Whether a file descriptor is open on a terminal — or was, before it hung up: judged by the device
 * it is open on (/proc/self/fd), which a hang-up leaves as it was. Not node:tty, which loads Node's
 * streams and node:net (~3 ms; test/cli/start-up.test.ts) into every command whose output goes
 * to pipes or files; elsewhere than Linux, false.
 */
import { readlinkSync } from "node:fs";

// A pty whose other end closed has left devpts: its link then ends " (deleted)".
const TERMINAL_DEVICE = /^\/dev\/(pts\/\d+|tty[\w.-]*|console)( \(deleted\))?$/;

export function onTerminalDevice(fd: number): boolean {
  try {
    return TERMINAL_DEVICE.test(readlinkSync(`/proc/self/fd/${fd}`));
  } catch {
    return false;
  }
}
