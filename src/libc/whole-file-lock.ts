/**
 * flock(2) on a whole file, without waiting, for locks that are not GPU slots (a run folder's
 * `run.lock`): bound here, through src/libc's one library handle, so that it does not depend on how
 * the slot lock (src/run/lock/) takes its own locks. A flock belongs to the open file description:
 * it goes when gpuplan closes the file or dies, kill -9 included, and Node opens files close-on-exec,
 * so a step never inherits it.
 */
import { constants } from "node:os";
import { errnoCode, loadLibc } from "./libc.js";

const LOCK_EX = 2;
const LOCK_NB = 4;

/** Take an exclusive flock on `fd` now: true when taken, false when another open file holds it. */
export async function tryLockWholeFile(fd: number): Promise<boolean> {
  const libc = await loadLibc();
  const flock = libc.func<(fd: number, operation: number) => number>("int flock(int fd, int operation)");
  const { EWOULDBLOCK, EAGAIN, EINTR } = constants.errno;
  for (;;) {
    if (flock(fd, LOCK_EX | LOCK_NB) === 0) return true;
    const errno = libc.errno();
    if (errno === EWOULDBLOCK || errno === EAGAIN) return false;
    if (errno !== EINTR)
      throw Object.assign(new Error(`flock: ${errnoCode(errno)}`), { code: errnoCode(errno) });
  }
}
