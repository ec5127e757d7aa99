/**
 * Starting step processes with glibc's posix_spawn(3) through koffi, reaped on SIGCHLD: a burst
 * of short steps then costs about what `xargs -P` pays, where child_process's fork of the whole
 * Node process cost twice that (docs/decisions/0002-starting-steps-with-posix-spawn.md: the
 * measurements, and why the call is synchronous on the main thread). What libuv did for us is
 * done here: own session and process group, default signal dispositions and an empty mask, fds
 * placed with dup2 file actions, cwd set in the child, the program looked up on the step's PATH.
 * Each pid started here is waitpid()ed by pid on SIGCHLD (never waitpid(-1): libuv reaps its own).
 * Linux with glibc only; elsewhere (musl, macOS, no koffi, a worker thread) the caller uses
 * child_process.
 */
import { constants } from "node:os";
import { isMainThread } from "node:worker_threads";
import { errnoCode, loadLibc } from "../../../libc/libc.js";
import { signalThroughLibc } from "../process-group.js";
import { bindSpawnTicks } from "./spawn-ticks.js";

interface SpawnRequest {
  /** Absolute path of the program (resolved against the step's PATH by the caller). */
  file: string;
  /** argv, argv[0] included. */
  argv: readonly string[];
  env: Record<string, string>;
  /** Absolute directory; null keeps gpuplan's own. */
  cwd: string | null;
  /** fds[i] becomes the child's fd i (0, 1, 2, then the inherited slot locks). */
  fds: readonly number[];
}

export interface ProcessExit {
  exitCode: number | null;
  signal: NodeJS.Signals | null;
}

type SpawnOutcome =
  | {
      pid: number;
      /** Its start time as /proc/PID/stat will give it, where the spawn's clock says (spawn-ticks.ts). */
      startTicks: number | null;
      exit: Promise<ProcessExit>;
    }
  | { error: string };

export interface PosixSpawner {
  spawn(request: SpawnRequest): SpawnOutcome;
}

const POSIX_SPAWN_SETSIGDEF = 0x04;
const POSIX_SPAWN_SETSIGMASK = 0x08;
const POSIX_SPAWN_SETSID = 0x80;
const WNOHANG = 1;
/** Generous: glibc's posix_spawnattr_t is 336 bytes and posix_spawn_file_actions_t 80 on 64-bit Linux. */
const OPAQUE_BYTES = 1024;
const SIGSET_BYTES = 128;
/** Safety-net poll while children are pending (SIGCHLD does the real work). */
const POLL_MS = 1000;

let loading: Promise<PosixSpawner | null> | undefined;

/** The process-wide spawner, or null where posix_spawn cannot be used (see the header). */
export function loadPosixSpawner(): Promise<PosixSpawner | null> {
  loading ??= bind().catch(() => null);
  return loading;
}

async function bind(): Promise<PosixSpawner | null> {
  if (process.platform !== "linux" || !isMainThread) return null;
  const libc = await loadLibc();
  // glibc only (addchdir_np, SETSID, its signal numbers): elsewhere child_process is used.
  if (!libc.glibc) return null;
  signalThroughLibc(libc);
  const fn = <T>(signature: string) => libc.func<T>(signature);
  const posixSpawn = fn<
    (
      pid: Int32Array,
      file: string,
      fa: Buffer,
      attr: Buffer,
      argv: (string | null)[],
      envp: (string | null)[],
    ) => number
  >(
    "int posix_spawn(_Out_ int *pid, const char *path, void *fa, void *attr, const char **argv, const char **envp)",
  );
  const faInit = fn<(fa: Buffer) => number>("int posix_spawn_file_actions_init(void *fa)");
  const faDestroy = fn<(fa: Buffer) => number>("int posix_spawn_file_actions_destroy(void *fa)");
  const faDup2 = fn<(fa: Buffer, fd: number, to: number) => number>(
    "int posix_spawn_file_actions_adddup2(void *fa, int fd, int newfd)",
  );
  const faClose = fn<(fa: Buffer, fd: number) => number>(
    "int posix_spawn_file_actions_addclose(void *fa, int fd)",
  );
  const faChdir = fn<(fa: Buffer, path: string) => number>(
    "int posix_spawn_file_actions_addchdir_np(void *fa, const char *path)",
  );
  const attrInit = fn<(attr: Buffer) => number>("int posix_spawnattr_init(void *attr)");
  const attrFlags = fn<(attr: Buffer, flags: number) => number>(
    "int posix_spawnattr_setflags(void *attr, short flags)",
  );
  const attrSigDefault = fn<(attr: Buffer, set: Buffer) => number>(
    "int posix_spawnattr_setsigdefault(void *attr, void *set)",
  );
  const attrSigMask = fn<(attr: Buffer, set: Buffer) => number>(
    "int posix_spawnattr_setsigmask(void *attr, void *set)",
  );
  const sigEmptySet = fn<(set: Buffer) => number>("int sigemptyset(void *set)");
  const waitpid = fn<(pid: number, status: Int32Array, options: number) => number>(
    "int waitpid(int pid, _Out_ int *status, int options)",
  );

  // One attribute object for every spawn: it is only read by posix_spawn.
  const attr = Buffer.alloc(OPAQUE_BYTES);
  // Every signal, glibc's two internal ones (32, 33) included: sigfillset leaves those out, and
  // glibc's spawn then sets them to SIG_IGN in the child, which exec keeps.
  const all = Buffer.alloc(SIGSET_BYTES, 0xff);
  const none = Buffer.alloc(SIGSET_BYTES);
  if (
    attrInit(attr) !== 0 ||
    sigEmptySet(none) !== 0 ||
    attrSigDefault(attr, all) !== 0 ||
    attrSigMask(attr, none) !== 0 ||
    // SETSID needs glibc ≥ 2.26; older ones answer EINVAL and child_process is used.
    attrFlags(attr, POSIX_SPAWN_SETSID | POSIX_SPAWN_SETSIGDEF | POSIX_SPAWN_SETSIGMASK) !== 0
  ) {
    return null;
  }

  const spawnTicks = bindSpawnTicks(libc);
  const pending = new Map<number, (exit: ProcessExit) => void>();
  const status = new Int32Array(1);
  let poll: NodeJS.Timeout | undefined;
  const reap = () => {
    for (const [pid, done] of pending) {
      const r = waitpid(pid, status, WNOHANG);
      if (r === pid) {
        pending.delete(pid);
        done(decodeStatus(status[0]!));
      } else if (r === -1 && libc.errno() === constants.errno.ECHILD) {
        // Someone else reaped it (a native library calling waitpid(-1)): its status is lost.
        pending.delete(pid);
        done({ exitCode: null, signal: null });
      }
    }
    if (pending.size === 0 && poll) {
      clearInterval(poll);
      poll = undefined;
    }
  };
  process.on("SIGCHLD", reap);

  return {
    spawn(request) {
      const fa = Buffer.alloc(OPAQUE_BYTES);
      faInit(fa);
      placeFds(
        request.fds,
        (from, to) => faDup2(fa, from, to),
        (fd) => faClose(fa, fd),
      );
      if (request.cwd !== null) faChdir(fa, request.cwd);
      const argv: (string | null)[] = [...request.argv, null];
      const envp: (string | null)[] = [];
      for (const key in request.env) envp.push(`${key}=${request.env[key]}`);
      envp.push(null);
      const pid = new Int32Array(1);
      let rc: number;
      let startTicks: number | null;
      try {
        const before = spawnTicks.now();
        rc = posixSpawn(pid, request.file, fa, attr, argv, envp);
        startTicks = spawnTicks.between(before, spawnTicks.now());
      } finally {
        faDestroy(fa);
      }
      if (rc !== 0) return { error: errnoCode(rc) };
      const child = pid[0]!;
      const exit = new Promise<ProcessExit>((done) => pending.set(child, done));
      poll ??= setInterval(reap, POLL_MS);
      return { pid: child, startTicks, exit };
    },
  };
}

/**
 * dup2 file actions that give the child fds[i] as fd i. dup2 clears close-on-exec on the new fd,
 * which is what lets the child keep them. When a source is itself one of the target numbers (a
 * low fd; or fd == i, where dup2 would do nothing and leave close-on-exec set), every source is
 * first moved above all of them, so no action overwrites a source another one still needs.
 */
export function placeFds(
  fds: readonly number[],
  dup2: (from: number, to: number) => void,
  close: (fd: number) => void,
): void {
  const k = fds.length;
  if (fds.every((fd) => fd >= k)) {
    fds.forEach((fd, i) => {
      dup2(fd, i);
    });
    return;
  }
  const base = Math.max(k, ...fds) + 1;
  for (const [i, fd] of fds.entries()) dup2(fd, base + i);
  for (let i = 0; i < k; i++) dup2(base + i, i);
  for (let i = 0; i < k; i++) close(base + i);
}

const signalNames = new Map<number, NodeJS.Signals>(
  Object.entries(constants.signals).map(([name, n]) => [n, name as NodeJS.Signals]),
);

/** waitpid's status word: WIFEXITED → exit code, WIFSIGNALED → signal. */
export function decodeStatus(status: number): ProcessExit {
  const low = status & 0x7f;
  if (low === 0) return { exitCode: (status >> 8) & 0xff, signal: null };
  return { exitCode: null, signal: signalNames.get(low) ?? (`SIG${low}` as NodeJS.Signals) };
}
