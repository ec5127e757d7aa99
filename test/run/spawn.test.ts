// The two ways of starting a step (posix_spawn through koffi, child_process) must give the step
// the same world: argv, env, cwd, stdin /dev/null, stdout/stderr files, slot fds from 3, its own
// session and process group, default signal dispositions and an empty mask, and the same spawn
// errors. Each case runs under both; `spawn: "node"` (the CLI's --spawn node, GPUPLAN_SPAWN=node)
// picks the child_process starter.
import { execFileSync } from "node:child_process";
import {
  chmodSync,
  closeSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { decodeStatus, loadPosixSpawner, placeFds } from "../../src/run/step/spawn/posix-spawn.js";
import { resolveCommand } from "../../src/run/step/spawn/resolve-command.js";
import type { StartRequest, StartResult } from "../../src/run/step/spawn/start-process.js";

type Start = (request: StartRequest) => Promise<StartResult>;
/** The tests' starter: each call gets two fresh files as the step's stdout and stderr. */
type StartWithFiles = (request: Omit<StartRequest, "stdout" | "stderr">) => Promise<StartResult>;

async function nodeStarter(): Promise<Start> {
  const { startProcess } = await import("../../src/run/step/spawn/start-process.js");
  return (request) => startProcess({ ...request, spawn: "node" });
}

let dir: string;
const starters: [string, () => Promise<Start>][] = [
  ["posix_spawn", async () => (await import("../../src/run/step/spawn/start-process.js")).startProcess],
  ["child_process", nodeStarter],
];

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), "gpuplan-spawn-"));
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const outputFiles = new WeakMap<object, { out: string; err: string }>();
let files = 0;

function withFiles(start: Start): StartWithFiles {
  return async (request) => {
    files++;
    const out = join(dir, `out-${files}`);
    const err = join(dir, `err-${files}`);
    const outFd = openSync(out, "w");
    const errFd = openSync(err, "w");
    try {
      const result = await start({ ...request, stdout: outFd, stderr: errFd });
      if ("process" in result) outputFiles.set(result.process, { out, err });
      return result;
    } finally {
      closeSync(outFd);
      closeSync(errFd);
    }
  };
}

async function collect(result: StartResult) {
  if (!("process" in result)) throw new Error(`did not start: ${result.error}`);
  const exit = await result.process.exit;
  const { out, err } = outputFiles.get(result.process)!;
  return {
    pid: result.process.pid,
    stdout: readFileSync(out, "utf8"),
    stderr: readFileSync(err, "utf8"),
    ...exit,
  };
}

it("posix_spawn is what this Linux/glibc machine uses", async () => {
  expect(await loadPosixSpawner()).not.toBeNull();
});

describe.each(starters)("starting a step with %s", (_name, getStarter) => {
  let start: StartWithFiles;
  beforeAll(async () => {
    start = withFiles(await getStarter());
  });

  it("passes argv untouched, env exactly, cwd, and separates stdout from stderr", async () => {
    const script = join(dir, "show.sh");
    writeFileSync(
      script,
      '#!/bin/sh\nprintf "%s|" "$@"; echo; echo "cwd=$(pwd) X=$X HOME=$' + '{HOME-unset}"; echo oops >&2\n',
    );
    chmodSync(script, 0o755);
    const r = await collect(
      await start({
        command: script,
        args: ["a b", "ü", ""],
        cwd: dir,
        env: { X: "1", PATH: "/usr/bin:/bin" },
        inheritFds: [],
      }),
    );
    expect(r.stdout).toBe(`a b|ü||\ncwd=${dir} X=1 HOME=unset\n`);
    expect(r.stderr).toBe("oops\n");
    expect(r).toMatchObject({ exitCode: 0, signal: null });
  });

  it("looks the program up on the step's PATH, not gpuplan's", async () => {
    const bin = mkdtempSync(join(dir, "bin-"));
    writeFileSync(join(bin, "only-here"), "#!/bin/sh\necho found\n");
    chmodSync(join(bin, "only-here"), 0o755);
    const r = await collect(
      await start({
        command: "only-here",
        args: [],
        cwd: dir,
        env: { PATH: `${bin}:/usr/bin:/bin` },
        inheritFds: [],
      }),
    );
    expect(r.stdout).toBe("found\n");
  });

  it("gives the step /dev/null on stdin, the slot fds as 3, 4, and its own session and process group", async () => {
    const a = join(dir, "slot-a");
    const b = join(dir, "slot-b");
    writeFileSync(a, "");
    writeFileSync(b, "");
    const fdA = openSync(a, "r");
    const fdB = openSync(b, "r");
    try {
      const r = await collect(
        await start({
          command: "/bin/sh",
          args: [
            "-c",
            'readlink /proc/$$/fd/0 /proc/$$/fd/3 /proc/$$/fd/4; ps -o pid=,pgid=,sid= -p $$; ls /proc/$$/fd | sort -n | tr "\\n" " "',
          ],
          cwd: dir,
          env: { PATH: "/usr/bin:/bin" },
          inheritFds: [fdA, fdB],
        }),
      );
      const lines = r.stdout.trim().split("\n");
      expect(lines.slice(0, 3)).toEqual(["/dev/null", a, b]);
      const [pid, pgid, sid] = lines[3]!.trim().split(/\s+/).map(Number);
      expect(pgid).toBe(pid);
      expect(sid).toBe(pid);
      // 0–4, plus what the harness itself passes down without close-on-exec (none of gpuplan's).
      const fds = lines[4]!.trim().split(" ").map(Number);
      expect(fds.slice(0, 5)).toEqual([0, 1, 2, 3, 4]);
      for (const fd of [fdA, fdB]) if (fd > 4) expect(fds).not.toContain(fd);
    } finally {
      closeSync(fdA);
      closeSync(fdB);
    }
  });

  it("starts the program with default signal dispositions and nothing blocked (Node ignores SIGPIPE)", async () => {
    // The program reads its own status: a shell would show its own mask of the moment instead.
    const r = await collect(
      await start({
        command: "grep",
        args: ["-E", "^Sig(Blk|Ign)", "/proc/self/status"],
        cwd: dir,
        env: { PATH: "/usr/bin:/bin" },
        inheritFds: [],
      }),
    );
    expect(r.stdout).toBe("SigBlk:\t0000000000000000\nSigIgn:\t0000000000000000\n");
  });

  it("reports exit codes and signals", async () => {
    expect(
      await collect(
        await start({ command: "/bin/sh", args: ["-c", "exit 7"], cwd: dir, env: {}, inheritFds: [] }),
      ),
    ).toMatchObject({ exitCode: 7, signal: null });
    expect(
      await collect(
        await start({ command: "/bin/sh", args: ["-c", "kill -TERM $$"], cwd: dir, env: {}, inheritFds: [] }),
      ),
    ).toMatchObject({ exitCode: null, signal: "SIGTERM" });
  });

  it("a missing program, a missing cwd and a non-executable file are spawn errors that say which, never `spawn x ENOENT`", async () => {
    const noexec = join(dir, "noexec");
    writeFileSync(noexec, "#!/bin/sh\n");
    chmodSync(noexec, 0o644);
    const env = { PATH: "/usr/bin:/bin" };
    expect(
      await start({ command: "no-such-program-gpuplan", args: [], cwd: dir, env, inheritFds: [] }),
    ).toEqual({
      error: "program `no-such-program-gpuplan` not found on PATH (/usr/bin:/bin)",
    });
    expect(await start({ command: "true", args: [], cwd: join(dir, "nope"), env, inheritFds: [] })).toEqual({
      error: `working folder ${join(dir, "nope")} does not exist`,
    });
    expect(await start({ command: "./missing.sh", args: [], cwd: dir, env, inheritFds: [] })).toEqual({
      error: `program ./missing.sh does not exist (${join(dir, "missing.sh")})`,
    });
    expect(await start({ command: noexec, args: [], cwd: dir, env, inheritFds: [] })).toEqual({
      error: `program ${noexec} is not executable (${noexec})`,
    });
  });

  it("many short processes at once: every one is reaped with its own status", async () => {
    const results = await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        start({ command: "/bin/sh", args: ["-c", `exit ${i % 5}`], cwd: dir, env: {}, inheritFds: [] }).then(
          collect,
        ),
      ),
    );
    expect(results.map((r) => r.exitCode)).toEqual(Array.from({ length: 60 }, (_, i) => i % 5));
    expect(new Set(results.map((r) => r.pid)).size).toBe(60);
  });
});

describe("posix_spawn details", () => {
  it("placeFds moves sources out of the way when one of them is a target number", () => {
    const actions: string[] = [];
    const record = (fds: number[]) => {
      actions.length = 0;
      placeFds(
        fds,
        (from, to) => actions.push(`dup2 ${from} ${to}`),
        (fd) => actions.push(`close ${fd}`),
      );
      return [...actions];
    };
    expect(record([20, 21, 22, 30])).toEqual(["dup2 20 0", "dup2 21 1", "dup2 22 2", "dup2 30 3"]);
    // fd 3 is a source and a target: direct dup2s would overwrite it before it is read.
    expect(record([20, 21, 22, 30, 3])).toEqual([
      "dup2 20 31",
      "dup2 21 32",
      "dup2 22 33",
      "dup2 30 34",
      "dup2 3 35",
      "dup2 31 0",
      "dup2 32 1",
      "dup2 33 2",
      "dup2 34 3",
      "dup2 35 4",
      "close 31",
      "close 32",
      "close 33",
      "close 34",
      "close 35",
    ]);
  });

  it("a source fd that is already its own target number still reaches the step (dup2 onto itself would keep close-on-exec)", async () => {
    const spawner = (await loadPosixSpawner())!;
    const koffi = (await import("koffi")).default;
    const dup3 = koffi.load("libc.so.6").func("int dup3(int oldfd, int newfd, int flags)") as (
      a: number,
      b: number,
      c: number,
    ) => number;
    const slot = join(dir, "slot-low");
    const other = join(dir, "slot-other");
    writeFileSync(slot, "");
    writeFileSync(other, "");
    const slotFd = openSync(slot, "r");
    const otherFd = openSync(other, "r");
    const out = join(dir, "low-out");
    const outFd = openSync(out, "w");
    const devNull = openSync("/dev/null", "r");
    // Picked after the opens above, which take the lowest free numbers.
    const open = new Set(readdirSync("/proc/self/fd").map(Number));
    const free = Array.from({ length: 60 }, (_, i) => i + 5).find((n) => !open.has(n))!;
    // `free` as a close-on-exec copy of the slot file, placed at index `free`: a source equal to its target.
    expect(dup3(slotFd, free, 0o2000000)).toBe(free);
    try {
      const fds = [devNull, outFd, outFd, ...Array.from({ length: free - 3 }, () => otherFd), free];
      const started = await spawner.spawn({
        file: "/bin/sh",
        argv: ["sh", "-c", `readlink /proc/$$/fd/3 /proc/$$/fd/${free}`],
        env: {},
        cwd: null,
        fds,
      });
      if ("error" in started) throw new Error(started.error);
      expect(await started.exit).toEqual({ exitCode: 0, signal: null });
      expect(readFileSync(out, "utf8").trim().split("\n")).toEqual([other, slot]);
    } finally {
      for (const fd of [free, slotFd, otherFd, outFd, devNull]) closeSync(fd);
    }
  });

  it("decodes waitpid status words", () => {
    expect(decodeStatus(0)).toEqual({ exitCode: 0, signal: null });
    expect(decodeStatus(3 << 8)).toEqual({ exitCode: 3, signal: null });
    expect(decodeStatus(9)).toEqual({ exitCode: null, signal: "SIGKILL" });
    expect(decodeStatus(15 | 0x80)).toEqual({ exitCode: null, signal: "SIGTERM" }); // core dumped bit
  });

  it("resolveCommand follows execvp: slash → path from cwd, else PATH in order, empty entry = cwd", () => {
    const root = mkdtempSync(join(tmpdir(), "gpuplan-path-"));
    const one = join(root, "one");
    const two = join(root, "two");
    execFileSync("mkdir", ["-p", one, two, join(root, "dironly", "tool")]);
    for (const d of [one, two]) {
      writeFileSync(join(d, "tool"), "#!/bin/sh\n");
      chmodSync(join(d, "tool"), 0o755);
    }
    writeFileSync(join(one, "plain"), "not executable");
    try {
      expect(resolveCommand("./x/y", "/base", "/usr/bin")).toBe("/base/x/y");
      expect(resolveCommand("tool", "/", `${join(root, "dironly")}:${two}:${one}`)).toBe(join(two, "tool"));
      expect(resolveCommand("plain", "/", `${one}:/usr/bin`)).toBeNull();
      expect(resolveCommand("tool", one, ":/nonexistent")).toBe(join(one, "tool"));
      expect(resolveCommand("", "/", "/usr/bin")).toBeNull();
    } finally {
      rmSync(root, { recursive: true, force: true });
    }
  });
});
