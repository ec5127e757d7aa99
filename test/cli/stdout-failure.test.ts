// A stdout that cannot be written is said in the line every failure has, with the system's code
// and a hint for what that code means for stdout (src/problems/stdout-failure.ts), by each path
// that writes stdout: the output guard (a command's result), the plan writer (`-o /dev/stdout`)
// and bin/gpuplan.js (`--version`, before the CLI loads). Each failure is made for real:
// /dev/full (ENOSPC), a stdout open for reading only (EBADF), a terminal whose other end closed (EIO).
import { spawnSync } from "node:child_process";
import { closeSync, constants, existsSync, mkdirSync, openSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import koffi from "koffi";
import { describe, expect, it } from "vitest";
import { stdoutFailureHint, stdoutFailureText } from "../../src/problems/stdout-failure.js";
import { ROOT, tempDir } from "../helpers/cli.js";

const COMMANDS: Record<string, { args: string[]; first: (code: string) => string }> = {
  "the output guard (compile's plan on stdout)": {
    args: ["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only"],
    first: (code) => `gpuplan: error: cannot write to stdout: ${code}  [file-system-error]`,
  },
  "the output guard under --json (targets --json)": {
    args: ["targets", "--json"],
    first: (code) => `gpuplan: error: cannot write to stdout: ${code}  [file-system-error]`,
  },
  "the plan writer (-o /dev/stdout)": {
    args: ["compile", join(ROOT, "examples/hello-cpu.yaml"), "--target", "cpu-only", "-o", "/dev/stdout"],
    first: (code) =>
      `gpuplan: error: cannot write plan /dev/stdout: ${code === "ENOSPC" ? "no space left on the device (or over quota)" : code}  [unwritable-file]`,
  },
  "bin/gpuplan.js --version": {
    args: ["--version"],
    first: (code) => `gpuplan: error: cannot write to stdout: ${code}  [file-system-error]`,
  },
};

/**
 * Commands that find problems (exit 1) and print a result on stdout all the same: when that
 * result is lost, the lost stdout (exit 2) is what the exit status says.
 */
const WITH_PROBLEMS: Record<string, string[]> = {
  "compile --format json of a pipeline with errors": [
    "compile",
    join(ROOT, "fixtures/compile/needs-cycle/pipeline.yaml"),
    "--target",
    "cpu-only",
    "--format",
    "json",
  ],
  "targets with a custom target that is not an inventory": ["targets", "--targets-dir", "targets"],
  "targets --json with a custom target that is not an inventory": [
    "targets",
    "--targets-dir",
    "targets",
    "--json",
  ],
  "run --dry-run of a step that cannot start": ["run", "missing-program.yaml", "--dry-run"],
  "run --dry-run --json of a step that cannot start": ["run", "missing-program.yaml", "--dry-run", "--json"],
};

/** gpuplan with `fd` as its stdout: exit code and stderr. */
function withStdout(fd: number, args: readonly string[], cwd = ROOT) {
  const r = spawnSync(process.execPath, [join(ROOT, "bin/gpuplan.js"), ...args], {
    cwd,
    stdio: ["ignore", fd, "pipe"],
    encoding: "utf8",
    env: { ...process.env, NO_COLOR: "1" },
  });
  return { status: r.status, stderr: r.stderr };
}

/** The slave end of a pseudo-terminal whose master is closed already: writes say EIO. */
function hungUpTerminal(): number | null {
  try {
    const libc = koffi.load("libc.so.6");
    const posixOpenpt = libc.func("int posix_openpt(int flags)") as (flags: number) => number;
    const grantpt = libc.func("int grantpt(int fd)") as (fd: number) => number;
    const unlockpt = libc.func("int unlockpt(int fd)") as (fd: number) => number;
    const ptsname = libc.func("const char *ptsname(int fd)") as (fd: number) => string | null;
    const master = posixOpenpt(constants.O_RDWR | constants.O_NOCTTY);
    if (master < 0) return null;
    const name = grantpt(master) === 0 && unlockpt(master) === 0 ? ptsname(master) : null;
    const slave = name === null ? null : openSync(name, constants.O_WRONLY | constants.O_NOCTTY);
    closeSync(master);
    return slave;
  } catch {
    return null;
  }
}

const STDOUTS: { code: string; open: () => number | null }[] = [
  { code: "ENOSPC", open: () => (existsSync("/dev/full") ? openSync("/dev/full", "w") : null) },
  { code: "EBADF", open: () => openSync("/dev/null", "r") },
  { code: "EIO", open: hungUpTerminal },
];

describe("a stdout that cannot be written", () => {
  for (const { code, open } of STDOUTS)
    for (const [path, { args, first }] of Object.entries(COMMANDS))
      it(`${code}: ${path} says so with the code and its hint, exit 2`, (ctx) => {
        const fd = open();
        if (fd === null) {
          ctx.skip();
          return;
        }
        try {
          const r = withStdout(fd, args);
          expect(r.status).toBe(2);
          expect(r.stderr.endsWith(`${first(code)}\n  hint: ${stdoutFailureHint(code)}\n`), r.stderr).toBe(
            true,
          );
        } finally {
          closeSync(fd);
        }
      });

  for (const { code, open } of STDOUTS)
    for (const [what, args] of Object.entries(WITH_PROBLEMS))
      it(`${code}: ${what}: exit 2, not the problems' 1`, (ctx) => {
        const fd = open();
        if (fd === null) {
          ctx.skip();
          return;
        }
        const { dir, cleanup } = tempDir();
        try {
          mkdirSync(join(dir, "targets"));
          writeFileSync(join(dir, "targets/broken.yaml"), "gpus: nope\n");
          writeFileSync(
            join(dir, "missing-program.yaml"),
            "version: 1\npipelines:\n  - name: p\n    steps:\n      - id: a\n        run: [gpuplan-no-such-program]\n",
          );
          const r = withStdout(fd, args, dir);
          expect(r.stderr).toContain(
            `gpuplan: error: cannot write to stdout: ${code}  [file-system-error]\n`,
          );
          expect(r.status, r.stderr).toBe(2);
        } finally {
          closeSync(fd);
          cleanup();
        }
      });

  it("the common codes each have a hint; another code is shown without one; only a code is ever shown", () => {
    for (const code of ["ENOSPC", "EDQUOT", "EFBIG", "EIO", "EBADF", "EACCES", "EPERM", "EROFS"])
      expect(stdoutFailureText(code)).toMatch(
        new RegExp(
          `^gpuplan: error: cannot write to stdout: ${code} {2}\\[file-system-error\\]\\n {2}hint: \\S.*\\n$`,
        ),
      );
    expect(stdoutFailureHint("ENOSPC")).toContain("the disk or quota holding stdout is full");
    expect(stdoutFailureHint("EBADF")).toContain("closed");
    expect(stdoutFailureText("ENXIO")).toBe(
      "gpuplan: error: cannot write to stdout: ENXIO  [file-system-error]\n",
    );
    for (const notACode of [undefined, "toString", "write EIO", "\u001b]0;owned\u0007"])
      expect(stdoutFailureText(notACode)).toBe(
        "gpuplan: error: cannot write to stdout: unknown error  [file-system-error]\n",
      );
  });
});
