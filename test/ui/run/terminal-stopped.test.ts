// A terminal that stops reading (Ctrl-S, a stalled ssh connection) must not stop the run: Node
// writes to a terminal synchronously, so a view's write held the whole run — a 2 s timeout went
// off only once the terminal read again. Here a real pseudo-terminal (Python's pty module) gets
// Ctrl-S a second into the run and Ctrl-Q 6 s later; the step's timeout must fire on time, and
// the terminal that gets to read again still sees the run's last words.
import { spawnSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { PassThrough } from "node:stream";
import { afterEach, describe, expect, it } from "vitest";
import { isOwnOpen, writeWithoutBlocking } from "../../../src/ui/run/terminal-writes.js";
import { ROOT, tempDir } from "../../helpers/cli.js";

const hasPython = spawnSync("python3", ["-c", "import pty"], { encoding: "utf8" }).status === 0;

let cleanups: (() => void)[] = [];
afterEach(() => {
  for (const c of cleanups) c();
  cleanups = [];
});

// Runs gpuplan on a 100×30 pty; stops reading and sends Ctrl-S at 1 s, Ctrl-Q at 7 s; prints
// everything the terminal received.
const DRIVER = `
import fcntl, os, pty, select, struct, sys, termios, time
pid, fd = pty.fork()
if pid == 0:
    fcntl.ioctl(1, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
    os.execvp(sys.argv[1], sys.argv[1:])
out = b""
def drain(until):
    global out
    while time.time() < until:
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                data = os.read(fd, 65536)
            except OSError:
                return False
            if not data:
                return False
            out += data
    return True
start = time.time()
drain(start + 1)
os.write(fd, b"\\x13")
time.sleep(6)
os.write(fd, b"\\x11")
drain(time.time() + 20)
os.waitpid(pid, 0)
sys.stdout.buffer.write(out)
`;

function runStopped(mode: "tui" | "plain", step: object): { terminal: string; durationMs: number } {
  const t = tempDir();
  cleanups.push(t.cleanup);
  writeFileSync(join(t.dir, "driver.py"), DRIVER);
  writeFileSync(
    join(t.dir, "p.yaml"),
    `version: 1\nname: stopped\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: a\n    steps:\n      - ${JSON.stringify(step)}\n`,
  );
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k === "CI" || k.startsWith("CI_") || k === "CONTINUOUS_INTEGRATION") continue;
    env[k] = v;
  }
  const r = spawnSync(
    "python3",
    [
      "driver.py",
      process.execPath,
      join(ROOT, "bin/gpuplan.js"),
      "run",
      "p.yaml",
      "--ui",
      mode,
      "--events",
      "events.jsonl",
    ],
    {
      cwd: t.dir,
      encoding: "utf8",
      timeout: 60_000,
      maxBuffer: 64 * 2 ** 20,
      env: { ...env, TERM: "xterm-256color", NO_COLOR: "1" },
    },
  );
  expect(r.status, r.stderr).toBe(0);
  const events = readFileSync(join(t.dir, "events.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((line) => JSON.parse(line));
  const end = events.find((e) => e.event === "gpu.step.end");
  expect(end.status).toBe("timeout");
  return { terminal: r.stdout, durationMs: end.durationMs };
}

// gpuplan on a pty that this driver holds open too, as a shell does: 1.5 s into the run, whether
// the open file the two share was made non-blocking (it must not: it would outlive gpuplan).
const SHARED = `
import fcntl, os, select, subprocess, sys, time
master, slave = os.openpty()
p = subprocess.Popen(sys.argv[1:], stdin=slave, stdout=slave, stderr=slave)
time.sleep(1.5)
print("shared non-blocking:", bool(fcntl.fcntl(slave, fcntl.F_GETFL) & os.O_NONBLOCK))
os.close(slave)
while p.poll() is None:
    if select.select([master], [], [], 0.1)[0]:
        try:
            os.read(master, 65536)
        except OSError:
            break
p.wait()
`;

describe.skipIf(!hasPython || process.platform !== "linux")("a terminal stopped with Ctrl-S", () => {
  it("does not hold the live view's run: the step's 2 s timeout fires on time", { timeout: 60_000 }, () => {
    const { terminal, durationMs } = runStopped("tui", {
      id: "s",
      run: ["sleep", "30"],
      memory: "numpy",
      timeout: "2s",
    });
    // Held by the terminal, it ended only after Ctrl-Q, 7 s into the run.
    expect(durationMs).toBeLessThan(4000);
    expect(terminal).toMatch(/run \S+ failed: 0 ok, 1 failed, 0 skipped/);
  });

  it("does not hold the plain view's run while a step prints fast", { timeout: 60_000 }, () => {
    const { terminal, durationMs } = runStopped("plain", {
      id: "s",
      // ~400 KiB a second: the terminal's buffers are full within a second of Ctrl-S.
      run: ["sh", "-c", "while :; do seq 100000 101000; sleep 0.01; done"],
      memory: "numpy",
      timeout: "2s",
    });
    expect(durationMs).toBeLessThan(4000);
    expect(terminal).toContain("failed: timed out after");
    expect(terminal).toMatch(/run \S+ failed: 0 ok, 1 failed, 0 skipped/);
  });

  it("leaves the terminal's open file that the shell shares as it was (blocking)", {
    timeout: 60_000,
  }, () => {
    const t = tempDir();
    cleanups.push(t.cleanup);
    writeFileSync(join(t.dir, "shared.py"), SHARED);
    writeFileSync(
      join(t.dir, "p.yaml"),
      `version: 1\nname: shared\nregistry: { platform_priority: [cpu] }\npipelines:\n  - name: a\n    steps:\n      - { id: s, run: ["sleep", "3"], memory: numpy }\n`,
    );
    const r = spawnSync(
      "python3",
      ["shared.py", process.execPath, join(ROOT, "bin/gpuplan.js"), "run", "p.yaml", "--ui", "plain"],
      { cwd: t.dir, encoding: "utf8", timeout: 60_000 },
    );
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout).toContain("shared non-blocking: False");
  });
});

describe("whose open of the terminal it is (/proc/self/fdinfo)", () => {
  it("is gpuplan's own only where libuv reopened it: close-on-exec", () => {
    // libuv's reopen of a pty slave (O_RDWR | O_CLOEXEC | O_LARGEFILE), as fdinfo shows it.
    expect(isOwnOpen("pos:\t0\nflags:\t02100002\nmnt_id:\t25\nino:\t3\n")).toBe(true);
    // The descriptor the shell handed down: shared, never made non-blocking.
    expect(isOwnOpen("pos:\t0\nflags:\t0100002\nmnt_id:\t25\nino:\t3\n")).toBe(false);
    expect(isOwnOpen(null)).toBe(false);
    expect(isOwnOpen("flags:\tnonsense\n")).toBe(false);
  });

  it("a stream that is not a terminal is left as it is", async () => {
    let asked = false;
    const stream = Object.assign(new PassThrough(), {
      isTTY: false,
      fd: 2,
      _handle: {
        setBlocking: () => {
          asked = true;
          return 0;
        },
      },
    });
    await writeWithoutBlocking(stream, () => "flags:\t02100002\n")();
    expect(asked).toBe(false);
  });

  it("a terminal shared with the shell is left blocking", async () => {
    const calls: boolean[] = [];
    const stream = Object.assign(new PassThrough(), {
      isTTY: true,
      fd: 2,
      _handle: {
        setBlocking: (b: boolean) => {
          calls.push(b);
          return 0;
        },
      },
    });
    await writeWithoutBlocking(stream, () => "flags:\t0100002\n")();
    expect(calls).toEqual([]);
    await writeWithoutBlocking(stream, () => "flags:\t02100002\n")();
    expect(calls).toEqual([false, true]);
  });
});
